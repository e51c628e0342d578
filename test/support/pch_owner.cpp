// Compiles the tests' precompiled header (support/pch.h) once; every test binary reuses it
// (agentd_test_pch in test/CMakeLists.txt). Nothing else is here.
