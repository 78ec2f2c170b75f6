#!/bin/sh
# under-valgrind.sh ARGS...: runs s2s ARGS under valgrind memcheck. `make valgrind` points
# the tests' S2S_BIN here, so every s2s a test starts runs under valgrind while the test
# binary itself runs at full speed. Reads the environment the Makefile sets:
#   S2S_VALGRIND_PROG  the s2s to run (an absolute path: tests start s2s in other
#                      directories too)
#   S2S_VALGRIND_LOGS  the directory of the logs, one per process (%p.log); with -q a log
#                      stays empty unless valgrind found an error or a definite leak, and
#                      scripts/checks/valgrind-verdict.sh fails on any that is not
# An error also makes s2s exit 99, which fails the test that ran it.
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --log-file="${S2S_VALGRIND_LOGS:?}/%p.log" \
    "${S2S_VALGRIND_PROG:?}" "$@"
