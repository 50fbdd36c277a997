# Fails when code outside the op registry compares an op's name with a string: behaviour attached
# to ops is a row of a RuleTable keyed by op id (include/evoxc/ops/rule_table.h; docs/architecture.md, "Rule tables").
# Run as: cmake -DROOT=<tree> [-DOPS_DOC=<docs/semantics.md>] -P check_op_names.cmake
#
# The op names and the string attributes come from OPS_DOC (default ROOT/docs/semantics.md): the
# first cell of each row of its "| op |" tables, which tests/ops/registry_test.cpp proves equal to
# the registry, and every "`name: string`" attribute. Scanned: ROOT/src, ROOT/include and
# ROOT/tools (*.cpp *.cc *.h *.hpp; not tests, bench or examples), except the registry and the IR
# text and JSON formats, which own op names: src/ops/, src/ir/printer.cpp, src/ir/parser.cpp,
# src/ir/json.cpp, src/ir/ir_text.*. Whole-line comments are skipped.
#
# What counts as an op-name comparison (a string literal "L", an expression X):
#  1. X == "L", X != "L", "L" == X, "L" != X, where L is an op name. Allowed when X is a variable
#     or member named after a string attribute of the catalogue (mode, side, ord): `mode == "add"`
#     compares scatter's mode, an attribute value. Name such a variable after its attribute.
#  2. A prefix or suffix test with a literal of 3 or more characters that begins an op name
#     (ends one, for ends_with): .rfind("L" .find("L" .starts_with("L" .compare(...,"L"
#     strcmp/strncmp(..., "L" and .substr(...) == "L" (`name.rfind("arg", 0) == 0`). The same
#     attribute-variable exception applies to the receiver.
#  3. A lookup of an op's name in a list: std::find / std::count / std::ranges::find(..., X) where
#     X is op, op_name, opname or name, and .count(X) / .contains(X) / .find(X) where X is
#     `op.name()` or `<...>op->name()` (a value of op.name() searched in a set or map of names).
# Not caught: names compared through a helper whose arguments hide both sides, and lists of op
# names that are only iterated (install loops `for (auto n : {...}) t.set(n, ...)` are allowed).
if(NOT ROOT)
  message(FATAL_ERROR "check_op_names: pass -DROOT=<tree to scan>")
endif()
if(NOT OPS_DOC)
  set(OPS_DOC ${ROOT}/docs/semantics.md)
endif()

# The lines of a file as a list, with the characters CMake lists treat specially (; [ ] \)
# replaced by placeholders, so each element is exactly one line.
function(read_lines path out)
  file(READ "${path}" text)
  string(REPLACE "\\" "<bs>" text "${text}")
  string(REPLACE ";" "<sc>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# ---- op names and string attributes, from the docs ----
if(NOT EXISTS ${OPS_DOC})
  message(FATAL_ERROR "check_op_names: cannot read the op catalogue's docs ${OPS_DOC}")
endif()
read_lines(${OPS_DOC} doc_lines)
set(ops "")
set(in_table OFF)
foreach(line IN LISTS doc_lines)
  if(line MATCHES "^\\| op \\|")
    set(in_table ON)
  endif()
  if(NOT line MATCHES "^\\|")
    set(in_table OFF)
  endif()
  if(in_table AND line MATCHES "^\\| `")
    string(REGEX MATCH "^\\| ([^|]*)" cell "${line}")
    string(REGEX MATCHALL "`[^`]*`" quoted "${CMAKE_MATCH_1}")
    foreach(q IN LISTS quoted)
      string(REPLACE "`" "" q "${q}")
      string(REGEX MATCHALL "[A-Za-z0-9_]+" words "${q}")
      list(APPEND ops ${words})
    endforeach()
  endif()
endforeach()
list(REMOVE_DUPLICATES ops)
list(LENGTH ops num_ops)
if(num_ops LESS 50)
  message(FATAL_ERROR "check_op_names: found only ${num_ops} op names in ${OPS_DOC}; has its table format changed?")
endif()
file(READ ${OPS_DOC} doc_text)
string(REGEX MATCHALL "`[a-z_0-9]+: string`" string_attrs "${doc_text}")
string(REGEX REPLACE "`([a-z_0-9]+): string`" "\\1" string_attrs "${string_attrs}")

# Whether `lit` begins an op name (ends one, with `suffix`) and has at least 3 characters.
function(names_an_op lit suffix out)
  set(${out} OFF PARENT_SCOPE)
  string(LENGTH "${lit}" n)
  if(n LESS 3)
    return()
  endif()
  foreach(op IN LISTS ops)
    string(LENGTH "${op}" m)
    if(m LESS n)
      continue()
    endif()
    if(suffix)
      math(EXPR start "${m} - ${n}")
    else()
      set(start 0)
    endif()
    string(SUBSTRING "${op}" ${start} ${n} part)
    if(part STREQUAL lit)
      set(${out} ON PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# Whether the last identifier of `expr` (op.name() -> name, (mode -> mode) is a string attribute.
function(is_attribute_value expr out)
  set(${out} OFF PARENT_SCOPE)
  if(expr MATCHES "([A-Za-z_][A-Za-z0-9_]*)[()]*$")
    list(FIND string_attrs "${CMAKE_MATCH_1}" i)
    if(i GREATER -1)
      set(${out} ON PARENT_SCOPE)
    endif()
  endif()
endfunction()

set(chain "[A-Za-z0-9_.>()-]*")
set(opish_value "(op|op_name|opname|name)")
set(opish_member "(op|op_name|opname|${chain}op(\\.|->)name\\(\\))")
# The hits of rule 1-3 on one line, as a list of short reasons; empty when the line is clean.
function(check_line line out)
  set(hits "")
  # 1. X ==/!= "L" and "L" ==/!= X with L an op name.
  string(REGEX MATCHALL "${chain}[ \t]*[!=]=[ \t]*\"[A-Za-z0-9_]+\"" found "${line}")
  foreach(m IN LISTS found)
    string(REGEX MATCH "^(${chain})[ \t]*[!=]=[ \t]*\"([A-Za-z0-9_]+)\"$" _ "${m}")
    set(x "${CMAKE_MATCH_1}")
    set(lit "${CMAKE_MATCH_2}")
    list(FIND ops "${lit}" i)
    is_attribute_value("${x}" attr)
    if(i GREATER -1 AND NOT attr)
      list(APPEND hits "compares with \"${lit}\"")
    endif()
  endforeach()
  string(REGEX MATCHALL "\"[A-Za-z0-9_]+\"[ \t]*[!=]=[ \t]*${chain}" found "${line}")
  foreach(m IN LISTS found)
    string(REGEX MATCH "^\"([A-Za-z0-9_]+)\"[ \t]*[!=]=[ \t]*(${chain})$" _ "${m}")
    set(lit "${CMAKE_MATCH_1}")
    string(REGEX REPLACE "\\)+$" "" x "${CMAKE_MATCH_2}")
    list(FIND ops "${lit}" i)
    is_attribute_value("${x}" attr)
    if(i GREATER -1 AND NOT attr)
      list(APPEND hits "compares with \"${lit}\"")
    endif()
  endforeach()
  # 2. Prefix and suffix tests.
  string(REGEX MATCHALL "${chain}\\.(rfind|find|starts_with|ends_with|compare)\\([^\"()]*\"[A-Za-z0-9_]+\"" found
                        "${line}")
  string(REGEX MATCHALL "strn?cmp\\(${chain},[ \t]*\"[A-Za-z0-9_]+\"" found2 "${line}")
  string(REGEX MATCHALL "${chain}\\.substr\\([^()]*\\)[ \t]*[!=]=[ \t]*\"[A-Za-z0-9_]+\"" found3 "${line}")
  foreach(m IN LISTS found found2 found3)
    string(REGEX MATCH "\"([A-Za-z0-9_]+)\"$" _ "${m}")
    set(lit "${CMAKE_MATCH_1}")
    set(suffix OFF)
    if(m MATCHES "\\.ends_with\\(")
      set(suffix ON)
    endif()
    names_an_op("${lit}" ${suffix} named)
    string(REGEX REPLACE "^strn?cmp\\(" "" recv "${m}")
    string(REGEX REPLACE "(\\.(rfind|find|starts_with|ends_with|compare|substr)\\(|,).*$" "" recv "${recv}")
    is_attribute_value("${recv}" attr)
    if(named AND NOT attr)
      list(APPEND hits "tests a name against \"${lit}\"")
    endif()
  endforeach()
  # 3. Lookups of an op's name in a list.
  # [^<>] keeps a match inside one statement: a ';' of the line is the placeholder <sc>.
  if(line MATCHES "std::(ranges::)?(find|count)\\([^<>]*,[ \t]*${opish_value}[ \t]*\\)"
     OR line MATCHES "\\.(count|contains|find)\\([ \t]*${opish_member}[ \t]*\\)")
    list(APPEND hits "looks an op name up in a list")
  endif()
  set(${out} "${hits}" PARENT_SCOPE)
endfunction()

# ---- the scan ----
set(allowed "^(src/ops/|src/ir/printer\\.cpp$|src/ir/parser\\.cpp$|src/ir/json\\.cpp$|src/ir/ir_text\\.)")
set(prefilter "[!=]=[ \t]*\"|\"[ \t]*[!=]=|find\\(|starts_with\\(|ends_with\\(|compare\\(|strn?cmp\\(|count\\(|contains\\(")
set(bad "")
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/*.cpp ${ROOT}/src/*.cc ${ROOT}/src/*.h ${ROOT}/src/*.hpp
     ${ROOT}/include/*.h ${ROOT}/include/*.hpp ${ROOT}/tools/*.cpp ${ROOT}/tools/*.cc ${ROOT}/tools/*.h)
list(SORT files)
foreach(rel IN LISTS files)
  if(rel MATCHES "${allowed}")
    continue()
  endif()
  file(STRINGS ${ROOT}/${rel} candidates REGEX "${prefilter}")
  if(NOT candidates)
    continue()
  endif()
  read_lines(${ROOT}/${rel} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "^[ \t]*(//|/\\*|\\*)" OR NOT line MATCHES "${prefilter}")
      continue()
    endif()
    check_line("${line}" hits)
    if(hits)
      string(STRIP "${line}" text)
      list(GET hits 0 why)
      # Still escaped: an element of `bad` must hold no list separator.
      list(APPEND bad "${rel}:${n}: ${why}: ${text}")
    endif()
  endforeach()
endforeach()

if(bad)
  # One unwrapped line per hit (FATAL_ERROR text is re-wrapped to the terminal width).
  foreach(v IN LISTS bad)
    string(REPLACE "<bs>" "\\" v "${v}")
    string(REPLACE "<sc>" ";" v "${v}")
    string(REPLACE "<lb>" "[" v "${v}")
    string(REPLACE "<rb>" "]" v "${v}")
    message(STATUS "op-name comparison: ${v}")
  endforeach()
  list(LENGTH bad count)
  message(FATAL_ERROR "${count} op-name comparison(s) outside src/ops; see the lines above. Attach the behaviour "
                      "to ops with a RuleTable keyed by op id (include/evoxc/ops/rule_table.h), or name a variable "
                      "holding an attribute value after its attribute (mode, side, ord)")
endif()
