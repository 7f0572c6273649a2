// A backend interface declared once (Ginkgo's GKO_DECLARE_* and GKO_STUB_*):
// each operation's signature is a macro (of its element types where it has
// them), and the interface's header lists them as OP(signature, name), `name`
// being what its NotCompiled error calls the operation. The header expands the
// list into declarations, the backend's files into explicit instantiations,
// and the stub of a build without that backend into definitions that throw
// through not_compiled(name), which each stub defines with its backend. The
// backend's own definitions are written out, so that a definition whose
// parameters drift from the list's is a link error in one build or the other.
#pragma once

#define BLOCKEIGS_BACKEND_DECLARE(signature, name) signature;
#define BLOCKEIGS_BACKEND_DECLARE_TEMPLATE(signature, name) \
  template <class T>                                        \
  signature;
#define BLOCKEIGS_BACKEND_INSTANTIATE(signature, name) template signature;
// The stubs: a function, or a specialisation of a template (or of a class template's member).
#define BLOCKEIGS_BACKEND_STUB(signature, name) \
  signature { not_compiled(name); }
#define BLOCKEIGS_BACKEND_STUB_SPECIALISATION(signature, name) \
  template <>                                                  \
  signature {                                                  \
    not_compiled(name);                                        \
  }
