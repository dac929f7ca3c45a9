/** Where a Node example listens. */
export interface ListenOptions {
  readonly port?: number;
  readonly host?: string;
  /**
   * The prefix Hono routes to the API, which must be the API's `basePath`; the Fastify and Express
   * examples read it from the API itself (`api.basePath`).
   */
  readonly basePath?: string;
}

/** What each Node example's `start()` resolves to. */
export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}
