#!/bin/sh
# skip-banner.sh LOG — printed at the end of `make check`: every check that
# was skipped (lib.sh's skip and tap.h's tap_skip append "FILE: why" to
# $CORDON_SKIP_LOG), so that prove's "All tests successful" does not hide
# what did not run.  CORDON_TEST_MUST_WORK=1 makes each skip a failure.
log=$1
[ -s "$log" ] || exit 0
n=$(wc -l <"$log")
echo
echo "################################################################"
echo "# $n check(s) SKIPPED: what they test was not tested here."
echo "# (CORDON_TEST_MUST_WORK=1 turns each skip into a failure.)"
sort "$log" | uniq -c | sed 's/^ *\([0-9]*\) /#   [x\1] /'
echo "################################################################"
