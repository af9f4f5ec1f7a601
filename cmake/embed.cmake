# Writes the text of IN into OUT as a C++ raw string constant named NAME (used to bundle the
# LibTorch declarations header into liboomlint-cpp.so, so it can never go missing at run time).
file(READ "${IN}" content)
string(FIND "${content}" ")oomlint_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter")
endif()
file(WRITE "${OUT}.tmp" "constexpr const char ${NAME}[] = R\"oomlint_embed(${content})oomlint_embed\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
