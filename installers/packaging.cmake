# CPack: a .deb of orrery-cli and the workbench with their presets and calibration data, a desktop entry, an
# icon and the MIME type of .orrery projects (`cpack -G DEB` in the build folder; tests/package checks it).
set(CPACK_PACKAGE_NAME "orrery")
set(CPACK_PACKAGE_VENDOR "Orrery developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Design and simulate LLM-training cluster fabrics")
set(CPACK_PACKAGE_CONTACT "orrery@localhost")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Design and simulate LLM-training cluster fabrics
 Orrery models fabrics, parallel strategies, congestion control and collective
 algorithms of LLM training at packet level, sweeps them, and shows what
 happens inside a run: orrery-cli runs headless, orrery is the workbench.")
if(ORRERY_HAVE_MPI)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")  # mpirun, for sweeps over MPI ranks
endif()
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/orrery)  # also the workbench's Help ▸ User guide
if(ORRERY_HAVE_WORKBENCH)
  install(FILES installers/orrery.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES resources/orrery.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  install(FILES installers/orrery-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME orrery.xml)
endif()
include(CPack)
