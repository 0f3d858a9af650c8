# Debian-packaged libraries (installed by scripts/deps.sh), found through pkg-config.
find_package(PkgConfig REQUIRED)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
target_link_libraries(pagellm_lib PUBLIC PkgConfig::CJSON PkgConfig::PCRE2 PkgConfig::UTF8PROC)
