/** What each Node example's `start()` resolves to. */
export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}
