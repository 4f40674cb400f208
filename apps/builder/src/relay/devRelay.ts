import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hex } from 'viem';
import { DEV_RELAY_NAMES, type RelayTarget } from '../config.js';
import { computeBuilderDomain, verifyBidTrace } from './signing.js';
import { SUBMIT_BLOCK_PATH } from './submitter.js';
import type { SubmitBlockRequest } from './types.js';

/** One submission a dev relay received, with the outcome of its checks. */
export interface ReceivedSubmission {
  received_at: string;
  request: SubmitBlockRequest;
  /** The BLS signature verified against `message.builder_pubkey` under DOMAIN_APPLICATION_BUILDER. */
  signature_valid: boolean;
  /** The BidTrace matches the payload (block hash, parent hash, number-independent fields) and the signature is valid. */
  accepted: boolean;
  reason?: string;
}

/** A running local relay (embedded defaults): its name, URL, what it received, and `close()`. */
export interface DevRelay extends RelayTarget {
  submissions: ReceivedSubmission[];
  close(): Promise<void>;
}

/** Four (or `names.length`) local relays started together. */
export interface DevRelays {
  relays: DevRelay[];
  /** `RELAY_URLS` value for them: `name=url,...`. */
  relayUrls: string;
  close(): Promise<void>;
}

function check(req: SubmitBlockRequest, domain: Uint8Array): { signature_valid: boolean; reason?: string } {
  const m = req?.message;
  const p = req?.execution_payload;
  if (!m || !p || typeof req.signature !== 'string') return { signature_valid: false, reason: 'message, execution_payload and signature are required' };
  const signature_valid =
    /^0x[0-9a-fA-F]{192}$/.test(req.signature) && /^0x[0-9a-fA-F]{96}$/.test(m.builder_pubkey ?? '') && verifyBidTrace(m, req.signature as Hex, domain);
  if (!signature_valid) return { signature_valid, reason: 'invalid signature' };
  if (m.block_hash !== p.block_hash) return { signature_valid, reason: 'block_hash of message and payload differ' };
  if (m.parent_hash !== p.parent_hash) return { signature_valid, reason: 'parent_hash of message and payload differ' };
  if (m.gas_used !== p.gas_used || m.gas_limit !== p.gas_limit) return { signature_valid, reason: 'gas of message and payload differ' };
  if (m.proposer_fee_recipient.toLowerCase() !== p.fee_recipient.toLowerCase())
    return { signature_valid, reason: 'fee recipient of message and payload differ' };
  return { signature_valid };
}

/**
 * Starts one local MEV-Boost relay stand-in on 127.0.0.1 (embedded defaults, DESIGN "Bundle
 * submission"): `POST /relay/v1/builder/blocks` verifies the BidTrace BLS signature under
 * DOMAIN_APPLICATION_BUILDER and its consistency with the payload, records every submission, and
 * answers 200 (accepted) or 400 `{code, message}`. `GET /relay/v1/data/bidtraces/builder_blocks_received`
 * (optional `block_number`, `slot`) lists accepted BidTraces as the relay data API does.
 */
export async function startDevRelay(opts: { name: string; port?: number; genesisForkVersion?: Hex }): Promise<DevRelay> {
  const domain = computeBuilderDomain(opts.genesisForkVersion ?? '0x00000000');
  const submissions: ReceivedSubmission[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.method === 'POST' && url.pathname === SUBMIT_BLOCK_PATH) {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 32 * 1024 * 1024) chunks.push(c);
      });
      req.on('end', () => {
        let request: SubmitBlockRequest;
        try {
          request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SubmitBlockRequest;
        } catch {
          return send(400, { code: 400, message: 'invalid JSON' });
        }
        const { signature_valid, reason } = check(request, domain);
        submissions.push({ received_at: new Date().toISOString(), request, signature_valid, accepted: !reason, reason });
        return reason ? send(400, { code: 400, message: reason }) : send(200);
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/relay/v1/data/bidtraces/builder_blocks_received') {
      const bn = url.searchParams.get('block_number');
      const slot = url.searchParams.get('slot');
      const rows = submissions
        .filter((s) => s.accepted)
        .filter((s) => (bn === null || s.request.execution_payload.block_number === bn) && (slot === null || s.request.message.slot === slot))
        .map((s) => ({
          ...s.request.message,
          block_number: s.request.execution_payload.block_number,
          num_tx: String(s.request.execution_payload.transactions.length),
          timestamp: String(Math.floor(Date.parse(s.received_at) / 1000)),
        }));
      return send(200, rows);
    }
    if (req.method === 'GET' && url.pathname === '/eth/v1/builder/status') return send(200);
    return send(404, { code: 404, message: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    name: opts.name,
    url: `http://127.0.0.1:${port}`,
    submissions,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Starts the four local relays of the embedded defaults, named like the production ones
 * (flashbots, ultrasound, agnostic, bloxroute), on free ports.
 *
 * @example
 * const relays = await startDevRelays()
 * const builder = await startBuilder({ ...config, relays: relays.relays })
 */
export async function startDevRelays(opts: { names?: readonly string[]; genesisForkVersion?: Hex } = {}): Promise<DevRelays> {
  const relays = await Promise.all((opts.names ?? DEV_RELAY_NAMES).map((name) => startDevRelay({ name, genesisForkVersion: opts.genesisForkVersion })));
  return {
    relays,
    relayUrls: relays.map((r) => `${r.name}=${r.url}`).join(','),
    close: async () => {
      await Promise.all(relays.map((r) => r.close()));
    },
  };
}
