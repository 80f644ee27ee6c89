#!/usr/bin/env bash
# A GPU step program with no usable device (CUDA_VISIBLE_DEVICES set empty,
# so this also runs on a GPU machine): it must exit with status 1 after one
# line on stderr that says "no CUDA device", and print no result table.
#   tests/expect_no_device.sh PROGRAM [ARGS...]
err=$(mktemp)
out=$(CUDA_VISIBLE_DEVICES= "$@" 2>"$err")
rc=$?
lines=$(wc -l <"$err")
msg=$(cat "$err")
rm -f "$err"
echo "exit status $rc; stderr: $msg"
if [ $rc -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -q "no CUDA device" <<<"$msg"; then
  echo "FAILED: expected exit status 1 and one stderr line saying 'no CUDA device'"
  exit 1
fi
if grep -q "median ms" <<<"$out"; then
  echo "FAILED: a result table was printed without a device"
  exit 1
fi
