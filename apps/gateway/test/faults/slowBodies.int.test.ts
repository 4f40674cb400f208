import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import { isProblem } from '../rawHttp.js';

// issue 28 item 3: a request that never finishes gets 408 within node's timeouts; an oversized body gets a 413 the client reads
const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 4_000;

const t = useTestGateway({ config: { rateLimitPerSecond: 0 }, http: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS } });

type Answer = { status: number; headers: string; body: string; writeError?: string; closed: boolean };

/**
 * Sends `head` then `pieces` on a raw TCP socket (never finishing what the head announces, if the
 * test wants that) and reads one HTTP/1.1 answer (Content-Length framed). Resolves with what was
 * read; `hangMs` only detects a hang (no answer at all), it is no speed check.
 */
function exchange(head: string, pieces: Buffer[], hangMs: number): Promise<Answer | 'hang' | { dropped: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    let data = Buffer.alloc(0);
    let writeError: string | undefined;
    let settled = false;
    const done = (v: Answer | 'hang' | { dropped: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done('hang'), hangMs);
    const parse = (closed: boolean) => {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return closed ? done({ dropped: writeError ?? 'closed without an answer' }) : undefined;
      const headers = data.subarray(0, end).toString('latin1');
      const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? -1);
      const body = data.subarray(end + 4);
      if (length >= 0 && body.length >= length) {
        answer = { status: Number(headers.split(' ')[1]), headers, body: body.subarray(0, length).toString('utf8'), closed };
        finish();
      } else if (closed) done({ dropped: `answer cut off (${body.length} of ${length} bytes)` });
    };
    // an answer counts once the client has also sent all it meant to (or failed to): a write error is part of the result
    let answer: Answer | undefined;
    let sent = false;
    const finish = () => {
      if (answer && sent) done({ ...answer, writeError });
    };
    socket.on('data', (c: Buffer) => {
      data = Buffer.concat([data, c]);
      parse(false);
    });
    socket.on('error', (e) => {
      writeError = e.message;
      sent = true;
      finish();
    });
    socket.on('close', () => parse(true));
    // like a client that sends the whole body before it reads (curl, python requests): one piece after the other
    void (async () => {
      for (const p of [Buffer.from(head), ...pieces]) {
        if (settled || socket.destroyed || writeError) break;
        await new Promise<void>((r) => socket.write(p, () => r()));
      }
      sent = true;
      finish();
    })();
  });
}

describe('slow requests are answered 408 within the HTTP timeouts', () => {
  it('a body that never finishes gets 408 problem+json, and the connection is closed', async () => {
    const head = `POST /api/v1/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const started = Date.now();
    const r = await exchange(head, [Buffer.from('{"capability_id":')], REQUEST_TIMEOUT_MS + 15_000);
    expect(r).not.toBe('hang');
    const a = r as Answer;
    expect(a.status, JSON.stringify(r)).toBe(408);
    expect(isProblem(a.body, 408)).toBe(true);
    expect(a.headers).toMatch(/connection: close/i);
    // answered because of the request timeout, not earlier (the head had arrived at once)
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
  });

  it('headers that never finish get 408 problem+json', async () => {
    const r = await exchange('GET /registry HTTP/1.1\r\nHost: x\r\nX-Slow: ', [], HEADERS_TIMEOUT_MS + 15_000);
    expect(r).not.toBe('hang');
    expect((r as Answer).status, JSON.stringify(r)).toBe(408);
    expect(isProblem((r as Answer).body, 408)).toBe(true);
  });

  it('the gateway keeps serving afterwards', async () => {
    expect((await fetch(`${t.url}/status/health`)).status).toBe(200);
  });
});

describe('an oversized body gets a 413 the client reads', () => {
  const big = Buffer.alloc(5 * 1024 * 1024, 0x20);
  it('5 MB with Content-Length: the client reads the whole 413 problem+json while still sending', async () => {
    const head = `POST /api/v1/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n`;
    const pieces: Buffer[] = [];
    for (let i = 0; i < big.length; i += 64 * 1024) pieces.push(big.subarray(i, i + 64 * 1024));
    const r = await exchange(head, pieces, 30_000);
    expect(r, JSON.stringify(r)).toMatchObject({ status: 413 });
    expect(isProblem((r as Answer).body, 413)).toBe(true);
    expect(JSON.parse((r as Answer).body).detail).toContain(String(MAX_BODY_BYTES));
    // the whole body went out without EPIPE or a reset: the gateway read and discarded it
    expect((r as Answer).writeError).toBeUndefined();
  });

  it('5 MB through fetch (undici): the 413 arrives', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await fetch(t.executeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
      expect(r.status).toBe(413);
      expect(isProblem(await r.text(), 413)).toBe(true);
    }
  });

  it('5 MB sent chunked: the same, on a connection kept alive (the rest of the body is read and discarded)', async () => {
    const chunk = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
    const pieces: Buffer[] = [];
    for (let i = 0; i < big.length; i += 256 * 1024) pieces.push(chunk(big.subarray(i, i + 256 * 1024)));
    pieces.push(Buffer.from('0\r\n\r\n'));
    const head = `POST /api/v1/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const r = await exchange(head, pieces, 30_000);
    expect(r, JSON.stringify(r)).toMatchObject({ status: 413 });
    expect(isProblem((r as Answer).body, 413)).toBe(true);
    expect((r as Answer).headers).not.toMatch(/connection: close/i);
    expect((r as Answer).writeError).toBeUndefined();
  });
});
