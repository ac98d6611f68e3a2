#!/usr/bin/env bash
# What dream estimates a model dream will cost, against what it then
# spends, on every eval scenario (testdata/eval), through the real
# Anthropic and OpenAI adapters against the project's fake server
# (llm/llmtest) playing a model that consolidates as the task asks
# (llmtest.Consolidator). The fake counts tokens as JSON bytes over four;
# the estimate counts with cl100k_base. One row per scenario and protocol:
# requests, input tokens (plain + cache read + cache written) and output
# tokens, estimated and reported, and their ratios; then the overall
# ratios and the worst error. Fails when an estimate is off by more than
# MAX_ERROR (default 0.25).
#
#   bench/estimate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/cmd/estimate -corpus testdata/eval -max-error "${MAX_ERROR:-0.25}"
