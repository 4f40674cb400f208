import { type Cluster, type Redis, ReplyError } from 'ioredis';

/**
 * Whether the store keeps what it acknowledged (docs/durability.md):
 * - `durable`: every master runs `appendonly yes` with `appendfsync always` (a write is on disk
 *   before Redis answers it);
 * - `lossy`: a master runs a setting that can lose acknowledged writes (`appendonly no`,
 *   `appendfsync everysec` or `no`);
 * - `unknown`: `CONFIG GET` was refused (renamed or disabled, an ACL without `+config`, a managed
 *   Redis), so the setting cannot be read.
 */
export type DurabilityVerdict = 'durable' | 'lossy' | 'unknown';

/** What {@link readStoreDurability} found. */
export interface StoreDurability {
  verdict: DurabilityVerdict;
  /** The setting as read, e.g. `appendonly yes, appendfsync always`; per node (`host:port`) on a cluster. */
  setting: string;
  /** What the setting risks, one sentence for the start banner and the logs (empty when `durable`). */
  risk: string;
}

/** The AOF settings of one node, or why they could not be read. */
type NodeSetting = { node: string; appendonly?: string; appendfsync?: string; refused?: string };

/**
 * Reads the store's durability with `CONFIG GET append*` on the connection's server, or on every
 * master of a Redis Cluster (`redis.isCluster`), and classifies it ({@link DurabilityVerdict}).
 * Reads only: never `CONFIG SET` (the Redis may be shared and not ours to configure).
 *
 * @throws The connection's error when Redis cannot be reached (a refused `CONFIG` is `unknown`, not an error).
 */
export async function readStoreDurability(redis: Redis): Promise<StoreDurability> {
  const masters = async () => {
    const cluster = redis as unknown as Cluster;
    if (cluster.nodes('master').length === 0) await cluster.ping(); // the masters are known once the slots are loaded
    const found = cluster.nodes('master');
    if (found.length === 0) throw new Error('Redis Cluster: no master node known');
    return found;
  };
  const nodes = redis.isCluster ? await masters() : [redis];
  const settings = await Promise.all(nodes.map((node) => readNode(node)));
  return classify(settings);
}

/**
 * The verdict of AOF settings read from one or more nodes (the weakest node decides: a cluster is
 * as durable as its least durable master). Exported for unit tests.
 */
export function classify(settings: readonly NodeSetting[]): StoreDurability {
  const name = (s: NodeSetting) => (settings.length > 1 ? `${s.node}: ` : '');
  const setting = settings
    .map(
      (s) =>
        `${name(s)}${s.refused ? `CONFIG GET refused (${s.refused})` : `appendonly ${s.appendonly}${s.appendonly === 'yes' ? `, appendfsync ${s.appendfsync}` : ''}`}`,
    )
    .join('; ');
  const risks = settings.map(riskOf).filter((r): r is { verdict: DurabilityVerdict; risk: string } => r !== undefined);
  if (risks.length === 0) return { verdict: 'durable', setting, risk: '' };
  const verdict: DurabilityVerdict = risks.some((r) => r.verdict === 'lossy') ? 'lossy' : 'unknown';
  return { verdict, setting, risk: [...new Set(risks.map((r) => r.risk))].join(' ') };
}

function riskOf(s: NodeSetting): { verdict: DurabilityVerdict; risk: string } | undefined {
  const lost =
    "paid calls already answered could lose their reservation, execution record, provider credit or refund intent, with the payer's USDC already moved on chain";
  if (s.refused) return { verdict: 'unknown', risk: 'The durability of acknowledged writes cannot be checked (CONFIG GET is not allowed).' };
  if (s.appendonly !== 'yes')
    return { verdict: 'lossy', risk: `Without an append-only file a Redis restart loses every write since the last snapshot: ${lost}.` };
  if (s.appendfsync === 'always') return undefined;
  const window = s.appendfsync === 'everysec' ? 'about the last second of' : 'the writes the OS had not yet flushed (up to about 30 s) of';
  return { verdict: 'lossy', risk: `A machine crash or power loss loses ${window} acknowledged writes: ${lost}.` };
}

async function readNode(node: Redis): Promise<NodeSetting> {
  const name = `${node.options.host}:${node.options.port}`;
  try {
    const reply = (await node.call('CONFIG', 'GET', 'append*')) as string[];
    const values = new Map<string, string>();
    for (let i = 0; i + 1 < reply.length; i += 2) values.set(reply[i], reply[i + 1]);
    return { node: name, appendonly: values.get('appendonly'), appendfsync: values.get('appendfsync') };
  } catch (e) {
    // a refusal is an answer (ERR unknown command, NOPERM); anything else means Redis did not answer
    const firstLine = String((e as Error)?.message).split('\n')[0];
    if (e instanceof ReplyError) return { node: name, refused: firstLine.slice(0, 120) };
    throw e;
  }
}

/**
 * `WAIT numreplicas timeout` after a paid call's money writes (docs/durability.md "Replicas"):
 * {@link wait} resolves once every write this process completed before the call has reached
 * `replicas` replicas, or after `timeoutMs`, with how many acknowledged.
 *
 * Redis's WAIT covers the writes of the connection that sends it, up to its last one. It runs on a
 * connection of its own (a blocked WAIT never holds up the requests' commands) that first writes
 * one barrier key (`INCR`, in the deployment's prefix: the same cluster slot as every other key):
 * the replication stream is ordered, so the replicas' acknowledgement of the barrier covers every
 * write any connection completed before it. Callers that arrive while a round is in flight join the
 * next one (group commit: one round trip for many paid calls).
 */
export class ReplicaAcks {
  private inFlight?: Promise<number>;
  private queued?: Promise<number>;

  /**
   * @param redis - A connection for WAIT alone (e.g. `connectRedis(...)` or `redis.duplicate()`).
   * @param barrierKey - The key the barrier writes, e.g. `${keys.prefix}durability:barrier`.
   * @param replicas - Replicas that must acknowledge (REDIS_WAIT_REPLICAS, ≥ 1).
   * @param timeoutMs - Longest wait, ms (REDIS_WAIT_TIMEOUT_MS; below the connection's command timeout).
   */
  constructor(
    private readonly redis: Redis,
    private readonly barrierKey: string,
    readonly replicas: number,
    readonly timeoutMs: number,
  ) {}

  /** How many replicas acknowledged every write completed before this call (fewer than {@link replicas}: the timeout passed). */
  wait(): Promise<number> {
    // a round in flight may have started before the caller's writes: they go with the next round
    if (!this.inFlight) return this.launch();
    this.queued ??= this.inFlight
      .catch(() => 0)
      .then(() => {
        this.queued = undefined;
        return this.launch();
      });
    return this.queued;
  }

  private launch(): Promise<number> {
    const round = this.round().finally(() => {
      if (this.inFlight === round) this.inFlight = undefined;
    });
    this.inFlight = round;
    return round;
  }

  private async round(): Promise<number> {
    // one pipeline, one node: on a cluster the keyless WAIT goes with the barrier's slot
    const replies = await this.redis.pipeline().incr(this.barrierKey).wait(this.replicas, this.timeoutMs).exec();
    const [incr, wait] = replies ?? [];
    if (incr?.[0]) throw incr[0];
    if (wait?.[0]) throw wait[0];
    return Number(wait?.[1] ?? 0);
  }
}
