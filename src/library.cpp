// The one source of libevoxc.so itself (the layers come in whole from their static libraries): its version,
// which a program that loads the library at run time can ask for.
extern "C" const char* evoxc_library_version() { return EVOXC_VERSION; }
