// Empty on purpose: gw_test_pch_pure exists to own the pure tests' precompiled header
// (see tests/CMakeLists.txt); CMake needs one source to build it from.
