import { Agent, request } from 'node:http';

export interface HttpResult {
  status: number;
  body: unknown;
  ms: number;
}

/**
 * One connection per request and no socket cap: a thousand requests in flight at once must not queue
 * in the client, and reusing idle keep-alive sockets races with the server closing them after 5 s.
 */
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

export function httpRequest(method: 'GET' | 'POST', url: string, body?: unknown): Promise<HttpResult> {
  const started = performance.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, agent, headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, ms: performance.now() - started });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function closeHttpClient(): void {
  agent.destroy();
}
