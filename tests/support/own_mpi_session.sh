#!/usr/bin/env bash
# own_mpi_session.sh COMMAND...: runs COMMAND with an Open MPI session directory of its own. The
# GoogleTest executables whose tests CTest runs one by one (gtest_discover_tests) start MPI as singletons,
# and Open MPI 4.1 creates and removes /tmp/ompi.HOST.UID without a lock: two starting together failed in
# orte_init ("mkdir ... File exists").
dir=$(mktemp -d /tmp/blockeigs-session-XXXXXX) || exit 1
export OMPI_MCA_orte_tmpdir_base=$dir
"$@"
status=$?
rm -rf "$dir"
exit $status
