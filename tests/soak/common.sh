# Shared by the soak scripts (sourced, not run): find a process started in tmux, read its CPU.

# The pid of the newest process whose command line starts with PATTERN (a regular expression
# for pgrep -f), waiting up to 10 s for it; the shell tmux starts it from does not match.
wait_for_process() {
  local pattern=$1 pid=""
  for _ in $(seq 1 50); do
    pid=$(pgrep -f -- "^$pattern" | head -1 || true)
    [ -n "$pid" ] && { echo "$pid"; return 0; }
    sleep 0.2
  done
  echo "process not found: $pattern" >&2
  return 1
}

# CPU time (user + system) of process PID, in clock ticks (getconf CLK_TCK per second).
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# The pid of the runner child of explorer PID, waiting up to 60 s for it to start.
wait_for_runner() {
  local parent=$1 runner=""
  for _ in $(seq 1 600); do
    runner=$(pgrep -P "$parent" -f " runner " | head -1 || true)
    [ -n "$runner" ] && { echo "$runner"; return 0; }
    sleep 0.1
  done
  echo "no runner started" >&2
  return 1
}
