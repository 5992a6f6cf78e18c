# CPack: a .deb of orrery-cli with its presets and calibration data.
set(CPACK_PACKAGE_NAME "orrery")
set(CPACK_PACKAGE_VENDOR "Orrery developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Design and simulate LLM-training cluster fabrics")
set(CPACK_PACKAGE_CONTACT "orrery@localhost")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
include(CPack)
