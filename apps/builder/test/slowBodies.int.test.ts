import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';

// issue 28 item 3 on the builder: a body over the limit gets a 413 the client reads, even a client
// that sends the whole body before reading (the rest is read and discarded, no EPIPE or reset)
const t = useTestBuilder();

/** Sends `head` and `body` in 64 KiB pieces, one after the other, then reads one Content-Length framed answer. */
function paced(head: string, body: Buffer): Promise<{ status: number; text: string; writeError?: string } | { dropped: string }> {
  const { port } = new URL(t.builder.url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    let data = Buffer.alloc(0);
    let writeError: string | undefined;
    let sent = false;
    let answer: { status: number; text: string } | undefined;
    const finish = () => {
      if (answer && sent) {
        socket.destroy();
        resolve({ ...answer, writeError });
      }
    };
    socket.on('data', (c: Buffer) => {
      data = Buffer.concat([data, c]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = data.subarray(0, end).toString('latin1');
      const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
      if (data.length - end - 4 >= length) {
        answer = { status: Number(headers.split(' ')[1]), text: data.subarray(end + 4, end + 4 + length).toString('utf8') };
        finish();
      }
    });
    socket.on('error', (e) => {
      writeError = e.message;
      sent = true;
      finish();
    });
    socket.on('close', () => {
      if (!answer) resolve({ dropped: writeError ?? 'closed without an answer' });
    });
    void (async () => {
      const pieces: Buffer[] = [Buffer.from(head)];
      for (let i = 0; i < body.length; i += 64 * 1024) pieces.push(body.subarray(i, i + 64 * 1024));
      for (const p of pieces) {
        if (socket.destroyed || writeError) break;
        await new Promise<void>((r) => socket.write(p, () => r()));
      }
      sent = true;
      finish();
    })();
  });
}

describe('builder: an oversized body', () => {
  it('5 MB: the client reads the 413 (-32600) and sends the whole body without EPIPE', { timeout: 60_000 }, async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 0x20);
    const r = await paced(`POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, body);
    expect(r, JSON.stringify(r)).toMatchObject({ status: 413 });
    const answer = r as { status: number; text: string; writeError?: string };
    expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    expect(answer.writeError).toBeUndefined();
  });
});
