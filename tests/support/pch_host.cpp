// Empty: the translation unit that builds the tests' precompiled header (tests/CMakeLists.txt,
// blockeigs_test_pch).
