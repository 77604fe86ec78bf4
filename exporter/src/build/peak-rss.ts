/**
 * Peak resident memory of a stage of the export: this process's RSS (Node and DuckDB together, as
 * the kernel counts it for the pod's limit), sampled while the stage runs. DuckDB works on its own
 * threads, so the event loop is free to sample during a load; a JavaScript stage yields at each await.
 */

const MB = 1024 * 1024;

export interface RssSampler {
  /** Stops sampling; the highest RSS seen since `sampleRss`, in MB. */
  stop(): number;
}

export function sampleRss(everyMs = 50): RssSampler {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, everyMs);
  // A sampler never keeps the process alive.
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return Math.round(peak / MB);
    },
  };
}
