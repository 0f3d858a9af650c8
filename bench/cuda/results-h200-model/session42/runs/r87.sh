#!/bin/bash
# Session 42, runs 8 and 7 in one call (device time was short and machines often refused): run 8 (.carry/f42b), then
# run 7, the full check of the committed code (.carry/f42). Run 6 (.carry/v5) did not run.
cd "$(dirname "$0")"
bash r8.sh
bash r7.sh
