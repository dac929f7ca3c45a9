/**
 * Loaded into every benchmarked server child with `--import`: answers the runner's IPC questions
 * with this process's own CPU time (`process.cpuUsage()`) and RSS, and exits on request (so a
 * `--cpu-prof` profile is written) or when the runner is gone. Not part of any server: the servers are the same code either way.
 * @module
 */
interface ProbeMessage {
  readonly type: "stats" | "exit";
}

/** SIGTERM runs the server's own graceful shutdown (the CLI's handler); the bare servers exit. */
function stop(): void {
  process.kill(process.pid, "SIGTERM");
  setTimeout(() => process.exit(0), 3000).unref();
}

/**
 * With BENCH_RSS_SAMPLE (the runner's `--rss`): RSS read every 100 ms, and the lowest and highest
 * since the last stats answer go with it, so a slice's whole range is seen, not one point of the
 * collector's saw-tooth. Off otherwise: the table's runs carry no timer of ours.
 */
const sampling = process.env["BENCH_RSS_SAMPLE"] !== undefined;
let rssLow = Number.POSITIVE_INFINITY;
let rssHigh = 0;
function sampleRss(): number {
  const rss = process.memoryUsage.rss();
  if (rss < rssLow) rssLow = rss;
  if (rss > rssHigh) rssHigh = rss;
  return rss;
}
if (sampling) setInterval(sampleRss, 100).unref();

if (process.send !== undefined) {
  process.on("message", (message: ProbeMessage) => {
    if (message.type === "stats") {
      const cpu = process.cpuUsage();
      const rss = sampling ? sampleRss() : process.memoryUsage.rss();
      process.send?.({ type: "stats", cpuMicros: cpu.user + cpu.system, rss, rssLow, rssHigh });
      rssLow = Number.POSITIVE_INFINITY;
      rssHigh = 0;
    } else if (message.type === "exit") {
      stop();
    }
  });
  // The runner is gone (killed, or it exited without stopping us): stop too, not serve on alone.
  process.on("disconnect", stop);
  // The IPC channel alone must not keep a stopped server alive.
  process.channel?.unref();
}
