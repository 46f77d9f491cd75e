# GPUPREP_PORTABLE: one binary that installs on Ubuntu 22.04, Ubuntu 24.04 and Debian 12 (the .deb).
# The libraries whose sonames differ between them (packaging/tables/) are linked in: spdlog and fmt
# header-only (Debian ships both headers), yaml-cpp from Debian's static archive. What stays dynamic
# is libc, libstdc++ and libgcc_s, whose symbol versions packaging/check-binary.sh checks.
# Sets GP_LINK_LIBS, the logging/YAML libraries gpuprep_core and gpuprep_embed link.
option(GPUPREP_PORTABLE "Link spdlog/fmt header-only and yaml-cpp statically (the .deb build)" OFF)
if(GPUPREP_PORTABLE)
  find_package(Threads REQUIRED)
  find_library(GP_YAML_CPP_STATIC NAMES libyaml-cpp.a REQUIRED)
  get_target_property(GP_YAML_INCLUDES yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
  add_library(gp_yaml_static INTERFACE)
  target_link_libraries(gp_yaml_static INTERFACE ${GP_YAML_CPP_STATIC})
  if(GP_YAML_INCLUDES)
    target_include_directories(gp_yaml_static SYSTEM INTERFACE ${GP_YAML_INCLUDES})
  endif()
  add_library(gp_spdlog_header_only INTERFACE)
  get_target_property(GP_SPDLOG_INCLUDES spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(gp_spdlog_header_only SYSTEM INTERFACE ${GP_SPDLOG_INCLUDES})
  target_compile_definitions(gp_spdlog_header_only INTERFACE SPDLOG_FMT_EXTERNAL)
  target_link_libraries(gp_spdlog_header_only INTERFACE fmt::fmt-header-only Threads::Threads)
  # The hardening Debian's own packages get from dpkg-buildflags (lintian checks for it): full RELRO and
  # bind-now always, fortified calls and stack protector where optimised (Release, and RelWithDebInfo,
  # which CI tests and packages from).
  set(GP_OPTIMISED $<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>>)
  add_compile_options($<${GP_OPTIMISED}:-D_FORTIFY_SOURCE=2> $<${GP_OPTIMISED}:-fstack-protector-strong>)
  add_link_options(-Wl,-z,relro -Wl,-z,now)
  set(GP_YAML_LIB gp_yaml_static)
  set(GP_LOG_LIBS gp_spdlog_header_only)
else()
  set(GP_YAML_LIB yaml-cpp)
  set(GP_LOG_LIBS spdlog::spdlog fmt::fmt)
endif()
