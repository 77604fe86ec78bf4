/**
 * Where the ready query-runners are. Outside Kubernetes a static list (`QUERY_RUNNER_URLS`); in
 * Kubernetes the runner Service's EndpointSlices, watched through the API server.
 */
export interface RunnerPool {
  /** Base URLs of the runners that are ready now. */
  ready(): readonly string[];
  close(): Promise<void>;
}

export class StaticRunnerPool implements RunnerPool {
  private readonly urls: readonly string[];

  constructor(urls: readonly string[]) {
    this.urls = urls.map((url) => url.replace(/\/+$/, ''));
  }

  ready(): readonly string[] {
    return this.urls;
  }

  async close(): Promise<void> {}
}
