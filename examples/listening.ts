/** Where a Node example listens, and the prefix it routes to the API (the API's `basePath`). */
export interface ListenOptions {
  readonly port?: number;
  readonly host?: string;
  readonly basePath?: string;
}

/** What each Node example's `start()` resolves to. */
export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}
