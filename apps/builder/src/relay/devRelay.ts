import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createPublicClient,
  getAddress,
  http,
  parseTransaction,
  recoverTransactionAddress,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type TransactionSerialized,
} from 'viem';
import { devParentBeaconBlockRoot } from '../block/payloadAttributes.js';
import { DEV_RELAY_NAMES, type RelayTarget } from '../config.js';
import { VALIDATORS_PATH } from './registrations.js';
import { blsPublicKey, computeBuilderDomain, signValidatorRegistration, verifyBidTrace, type ValidatorRegistrationJson } from './signing.js';
import { SUBMIT_BLOCK_PATH } from './submitter.js';
import type { SubmitBlockRequest, ValidatorRegistrationEntry } from './types.js';
import { decodeContentEncoding, decodeSubmitBlockRequest, verifyPayloadBlockHash } from './wire.js';

/** BLS secret key of the dev chain's one validator (0x11…11): it proposes every dev slot. */
export const DEV_PROPOSER_SECRET_KEY: Hex = `0x${'11'.repeat(32)}`;
/** Its public key, the `proposer_pubkey` of every dev BidTrace. */
export const DEV_PROPOSER_PUBKEY: Hex = blsPublicKey(DEV_PROPOSER_SECRET_KEY);
/** Where the dev validator's registration asks to be paid: a fixed address outside the dev mnemonic's accounts. */
export const DEV_PROPOSER_FEE_RECIPIENT: Address = getAddress('0x00000000000000000000000000000000000fee01');

/** One submission a dev relay received, with the outcome of its checks. */
export interface ReceivedSubmission {
  received_at: string;
  /** The submission in relay JSON (decoded from SSZ when it came as SSZ). */
  request: SubmitBlockRequest;
  /** How it came: `ssz` (`application/octet-stream`) or `json`, and whether gzipped. */
  encoding: 'ssz' | 'json';
  gzip: boolean;
  /** The body as received, after gunzip: SSZ bytes or UTF-8 JSON. */
  body: Uint8Array;
  /** The BLS signature verified against `message.builder_pubkey` under DOMAIN_APPLICATION_BUILDER. */
  signature_valid: boolean;
  /** Every check passed: signature, BidTrace against payload, registration, block hash, payment. */
  accepted: boolean;
  /** Why it was rejected. */
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

/** Options of {@link startDevRelay}. */
export interface DevRelayOptions {
  name: string;
  port?: number;
  genesisForkVersion?: Hex;
  /**
   * The dev chain the relay serves registrations for: each dev slot is a block number (slot =
   * number; no beacon chain), and `GET /relay/v1/builder/validators` lists the next `slotsAhead`
   * slots after the chain's head. Unset: the list is empty (the relay gets nothing).
   */
  ethereumRpcUrl?: string;
  /** Slots listed after the head (default 32, one epoch). */
  slotsAhead?: number;
  /** Whether the relay lists the dev proposer for `slot` (default: every slot). A slot it does not list gets no block. */
  listsSlot?: (slot: bigint) => boolean;
  /** Encodings it takes (default both): without `ssz`, an SSZ body gets 415; without `gzip`, a gzipped body gets 415. */
  accepts?: { ssz?: boolean; gzip?: boolean };
  /** The validator proposing every slot (default {@link DEV_PROPOSER_SECRET_KEY}, {@link DEV_PROPOSER_FEE_RECIPIENT}). */
  proposer?: { secretKey: Hex; feeRecipient: Address };
  /**
   * The parent beacon block root of the block after `parentHash`, which the block hash commits to
   * and the payload does not carry (a real relay has it from its beacon node). Default: the dev
   * chain's stand-in, {@link devParentBeaconBlockRoot}.
   */
  parentBeaconBlockRoot?: (parentHash: Hash) => Hash;
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= max) chunks.push(c);
    });
    req.on('end', () => resolve(size > max ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Starts one local MEV-Boost relay stand-in on 127.0.0.1 (embedded defaults, docs/decisions.md "Bundle
 * submission"), speaking the relay builder API:
 * - `GET /relay/v1/builder/validators`: the dev proposer's signed registration for each upcoming
 *   dev slot (slot = block number);
 * - `POST /relay/v1/builder/blocks`: an Electra `SubmitBlockRequest` as SSZ (`application/octet-stream`)
 *   or JSON, optionally gzipped; checked in order: decodes, BLS signature under
 *   DOMAIN_APPLICATION_BUILDER, BidTrace against the payload, the slot's registration (proposer
 *   pubkey and fee recipient), the block hash recomputed from the payload
 *   (`@ethereumjs/block`, with the dev parent beacon block root), and the last transaction paying
 *   `value` from the block's fee recipient to the registered fee recipient. Every submission is
 *   recorded; answers 200, 400 `{code, message}` or 415;
 * - `GET /relay/v1/data/bidtraces/builder_blocks_received` (optional `block_number`, `slot`) lists
 *   accepted BidTraces as the relay data API does.
 */
export async function startDevRelay(opts: DevRelayOptions): Promise<DevRelay> {
  const domain = computeBuilderDomain(opts.genesisForkVersion ?? '0x00000000');
  const proposer = opts.proposer ?? { secretKey: DEV_PROPOSER_SECRET_KEY, feeRecipient: DEV_PROPOSER_FEE_RECIPIENT };
  const pubkey = blsPublicKey(proposer.secretKey);
  const listsSlot = opts.listsSlot ?? (() => true);
  const accepts = { ssz: opts.accepts?.ssz ?? true, gzip: opts.accepts?.gzip ?? true };
  const client: PublicClient | undefined = opts.ethereumRpcUrl
    ? (createPublicClient({ transport: http(opts.ethereumRpcUrl, { retryCount: 0 }) }) as PublicClient)
    : undefined;
  const registeredAt = String(Math.floor(Date.now() / 1000));
  const signed = new Map<string, { message: ValidatorRegistrationJson; signature: Hex }>();
  /** The validator's registration, signed once per gas limit (its preference is the dev chain's gas limit). */
  const registration = (gasLimit: bigint) => {
    const key = gasLimit.toString();
    let r = signed.get(key);
    if (!r) {
      const message: ValidatorRegistrationJson = { fee_recipient: proposer.feeRecipient.toLowerCase() as Hex, gas_limit: key, timestamp: registeredAt, pubkey };
      r = { message, signature: signValidatorRegistration(message, proposer.secretKey, domain) };
      signed.set(key, r);
    }
    return r;
  };
  let chainId: number | undefined;
  const submissions: ReceivedSubmission[] = [];

  async function check(request: SubmitBlockRequest): Promise<{ signature_valid: boolean; reason?: string }> {
    const m = request.message;
    const p = request.execution_payload;
    const signature_valid = verifyBidTrace(m, request.signature, domain);
    if (!signature_valid) return { signature_valid, reason: 'invalid signature' };
    if (m.block_hash !== p.block_hash) return { signature_valid, reason: 'block_hash of message and payload differ' };
    if (m.parent_hash !== p.parent_hash) return { signature_valid, reason: 'parent_hash of message and payload differ' };
    if (m.gas_used !== p.gas_used || m.gas_limit !== p.gas_limit) return { signature_valid, reason: 'gas of message and payload differ' };
    const slot = BigInt(m.slot);
    if (!client || !listsSlot(slot) || slot !== BigInt(p.block_number))
      return { signature_valid, reason: `no registered proposer for slot ${m.slot} at this relay` };
    if (m.proposer_pubkey.toLowerCase() !== pubkey.toLowerCase())
      return { signature_valid, reason: 'proposer_pubkey is not the registered proposer of the slot' };
    if (m.proposer_fee_recipient.toLowerCase() !== proposer.feeRecipient.toLowerCase())
      return { signature_valid, reason: 'proposer_fee_recipient is not the registered fee recipient' };
    chainId ??= await client.getChainId();
    const hashed = await verifyPayloadBlockHash(request, (opts.parentBeaconBlockRoot ?? devParentBeaconBlockRoot)(p.parent_hash), chainId);
    if (!hashed.ok) return { signature_valid, reason: `block hash does not match the header: ${hashed.reason}` };
    const last = p.transactions.at(-1);
    if (!last) return { signature_valid, reason: 'no payment transaction: the block is empty' };
    try {
      const tx = parseTransaction(last as TransactionSerialized);
      const from = await recoverTransactionAddress({ serializedTransaction: last as TransactionSerialized });
      if (from.toLowerCase() !== p.fee_recipient.toLowerCase())
        return { signature_valid, reason: "the last transaction is not sent by the block's fee recipient" };
      if (tx.to?.toLowerCase() !== proposer.feeRecipient.toLowerCase())
        return { signature_valid, reason: 'the last transaction does not pay the registered fee recipient' };
      if ((tx.value ?? 0n) !== BigInt(m.value))
        return { signature_valid, reason: `the payment transaction pays ${tx.value ?? 0n} wei, the bid says ${m.value}` };
    } catch {
      return { signature_valid, reason: 'the last transaction does not decode' };
    }
    return { signature_valid };
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    const send = (status: number, body?: unknown) => {
      if (res.headersSent) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    void (async () => {
      if (req.method === 'POST' && url.pathname === SUBMIT_BLOCK_PATH) {
        const raw = await readBody(req, 32 * 1024 * 1024);
        if (!raw) return send(413, { code: 413, message: 'body too large' });
        const contentType = req.headers['content-type'];
        const contentEncoding = req.headers['content-encoding'];
        const gzip = (contentEncoding ?? '').toLowerCase().includes('gzip');
        const ssz = (contentType ?? '').toLowerCase().startsWith('application/octet-stream');
        if ((gzip && !accepts.gzip) || (ssz && !accepts.ssz))
          return send(415, { code: 415, message: `unsupported ${gzip && !accepts.gzip ? 'content encoding gzip' : 'content type'}` });
        let body: Buffer;
        let request: SubmitBlockRequest;
        try {
          body = decodeContentEncoding(raw, contentEncoding);
          request = decodeSubmitBlockRequest(body, contentType);
        } catch {
          return send(400, { code: 400, message: `could not decode the ${ssz ? 'SSZ' : 'JSON'} SubmitBlockRequest` });
        }
        const { signature_valid, reason } = await check(request);
        submissions.push({
          received_at: new Date().toISOString(),
          request,
          encoding: ssz ? 'ssz' : 'json',
          gzip,
          body,
          signature_valid,
          accepted: !reason,
          reason,
        });
        return reason ? send(400, { code: 400, message: reason }) : send(200);
      }
      if (req.method === 'GET' && url.pathname === VALIDATORS_PATH) {
        if (!client) return send(200, []);
        const head = await client.getBlock({ blockTag: 'latest' });
        const reg = registration(head.gasLimit);
        const entries: ValidatorRegistrationEntry[] = [];
        for (let slot = head.number + 1n; slot <= head.number + BigInt(opts.slotsAhead ?? 32); slot++) {
          if (listsSlot(slot)) entries.push({ slot: slot.toString(), validator_index: '0', entry: reg });
        }
        return send(200, entries);
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
      req.resume();
      return send(404, { code: 404, message: 'not found' });
    })().catch(() => send(500, { code: 500, message: 'internal error' }));
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
 * (flashbots, ultrasound, agnostic, bloxroute), on free ports, serving registrations for the dev
 * chain at `ethereumRpcUrl`. `relay` adds options per relay name (e.g. one that lists no slot).
 *
 * @example
 * const relays = await startDevRelays({ ethereumRpcUrl: eth.rpcUrl })
 * const builder = await startBuilder({ ...config, relays: relays.relays })
 */
export async function startDevRelays(
  opts: { names?: readonly string[]; genesisForkVersion?: Hex; ethereumRpcUrl?: string; relay?: Record<string, Partial<Omit<DevRelayOptions, 'name'>>> } = {},
): Promise<DevRelays> {
  const relays = await Promise.all(
    (opts.names ?? DEV_RELAY_NAMES).map((name) =>
      startDevRelay({ name, genesisForkVersion: opts.genesisForkVersion, ethereumRpcUrl: opts.ethereumRpcUrl, ...opts.relay?.[name] }),
    ),
  );
  return {
    relays,
    relayUrls: relays.map((r) => `${r.name}=${r.url}`).join(','),
    close: async () => {
      await Promise.all(relays.map((r) => r.close()));
    },
  };
}
