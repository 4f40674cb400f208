import fc from 'fast-check';
import { UptoJob } from './jobCommands.js';
import {
  BearerSearch,
  ConcurrentDuplicate,
  Crash,
  Deposit,
  DepositViewFails,
  IdempotencyReuseOtherPayer,
  IdempotencyReuseSamePayer,
  NonFiniteInput,
  OpenDispute,
  PaidCall,
  PayoutPass,
  ProbeRecovery,
  QuoteReuse,
  QuotedCall,
  ReplayPayment,
  ResolveDispute,
  RoutedCall,
  StrangerReplay,
  SuspendOffer,
  Sweep,
  ENABLED_HOLE_COMMANDS,
  type HOLE_COMMANDS,
  type MoneyCommand,
  type OfferName,
  type ProviderMode,
} from './commands.js';
import {
  ChannelCall,
  ChannelPass,
  ChannelReorg,
  CooperativeRefund,
  OverDeposit,
  TimedWithdrawal,
  UptoRoutedCall,
  VoucherReorder,
  VoucherReuse,
} from './channelCommands.js';
import { ClockSkew, DropTransaction, LoseLastWrites, Reorg } from './faultCommands.js';

/**
 * The fault commands of issue 33 item 7 (faultCommands.ts): a reorg of the payment chain, the
 * private Redis restarted without its last writes, a settlement dropped from the node's pool, a
 * skewed clock. Each is followed by the worker's repair from the chain and every equation.
 */
export const FAULT_COMMANDS = ['Reorg', 'ChannelReorg', 'LoseLastWrites', 'DropTransaction', 'ClockSkew'] as const;
/** Fault commands enabled by default (MONEY_INVARIANTS_ENABLE names more to force on). */
export const ENABLED_FAULT_COMMANDS: readonly (typeof FAULT_COMMANDS)[number][] = [...FAULT_COMMANDS];

/**
 * The payment-scheme commands of issue 35 item 6 (channelCommands.ts): `upto` below its ceiling, and
 * `batch-settlement` channels (vouchers, reuse, reorder, over-deposit, the worker's claim and settlement,
 * a worker killed after its claim, a cooperative refund, a timed withdrawal). All on by default.
 */
export const SCHEME_COMMANDS = [
  'UptoRoutedCall',
  'UptoJob',
  'ChannelCall',
  'VoucherReuse',
  'VoucherReorder',
  'OverDeposit',
  'ChannelPass',
  'ChannelPassCrash',
  'CooperativeRefund',
  'TimedWithdrawal',
] as const;

/**
 * The command arbitraries of one sequence: payers 0 and 1; the hole and fault commands
 * ({@link HOLE_COMMANDS}, {@link FAULT_COMMANDS}) when enabled (by default or in `enabled`) and not
 * named in `disabled`.
 */
export function moneyCommands(enabled: ReadonlySet<string>, disabled: ReadonlySet<string> = new Set()): fc.Arbitrary<MoneyCommand>[] {
  const payer = fc.integer({ min: 0, max: 1 });
  const kind = fc.constantFrom<'builtin' | 'provider'>('builtin', 'provider', 'provider');
  const mode = fc.constantFrom<ProviderMode>('ok', 'ok', 'ok', 'http_500', 'timeout', 'bad_signature', 'invalid_output');
  const index = fc.nat({ max: 50 });
  const on = (name: (typeof HOLE_COMMANDS)[number]) => !disabled.has(name) && (enabled.has(name) || ENABLED_HOLE_COMMANDS.includes(name));
  const fault = (name: (typeof FAULT_COMMANDS)[number]) => !disabled.has(name) && (enabled.has(name) || ENABLED_FAULT_COMMANDS.includes(name));
  const scheme = (name: (typeof SCHEME_COMMANDS)[number]) => !disabled.has(name);
  const paidCall = fc.tuple(payer, kind, mode, fc.boolean()).map(([p, k, md, key]): MoneyCommand => new PaidCall(p, k, k === 'builtin' ? 'ok' : md, key));
  const openDispute = index.map((i): MoneyCommand => new OpenDispute(i));
  const resolveDispute = fc.tuple(index, fc.constantFrom<'refund' | 'release'>('refund', 'release')).map(([i, o]): MoneyCommand => new ResolveDispute(i, o));
  const arbs: fc.Arbitrary<MoneyCommand>[] = [
    // paid calls are what everything else acts on: three times as likely as any other command
    paidCall,
    paidCall,
    paidCall,
    fc.tuple(payer, kind).map(([p, k]) => new ConcurrentDuplicate(p, k)),
    index.map((i) => new ReplayPayment(i)),
    index.map((i) => new IdempotencyReuseSamePayer(i)),
    // disputes need a succeeded provider call first: twice as likely, so resolutions happen
    openDispute,
    openDispute,
    resolveDispute,
    resolveDispute,
    fc.constant(new PayoutPass()),
    fc.tuple(payer, fc.integer({ min: 1, max: 10 })).map(([p, c]) => new Deposit(p, c)),
    payer.map((p) => new BearerSearch(p)),
    fc.tuple(payer, kind, fc.constantFrom<'broadcast' | 'settle'>('broadcast', 'settle')).map(([p, k, a]) => new Crash(p, k, a)),
    fc.constant(new Sweep()),
    // the routed contract (two offers), quotes and suspensions (issue 36)
    fc.tuple(payer, mode, mode).map(([p, cheap, dear]) => new RoutedCall(p, cheap, dear)),
    fc.tuple(payer, mode).map(([p, md]) => new QuotedCall(p, md)),
    fc.constantFrom<OfferName>('cheap', 'dear').map((o) => new SuspendOffer(o)),
    fc.constantFrom<OfferName>('cheap', 'dear').map((o) => new ProbeRecovery(o)),
  ];
  if (on('IdempotencyReuseOtherPayer')) arbs.push(index.map((i) => new IdempotencyReuseOtherPayer(i)));
  if (on('StrangerReplay')) arbs.push(index.map((i) => new StrangerReplay(i)));
  if (on('NonFiniteInput')) arbs.push(payer.map((p) => new NonFiniteInput(p)));
  if (on('CrashAfterProviderRun')) arbs.push(payer.map((p) => new Crash(p, 'provider', 'run')));
  if (on('DepositViewFails')) arbs.push(payer.map((p) => new DepositViewFails(p)));
  if (on('QuoteReuse')) arbs.push(index.map((i) => new QuoteReuse(i)));
  // the payment schemes (issue 35 item 6): a channel's first call opens it, so channel calls are twice as likely
  if (scheme('UptoRoutedCall')) arbs.push(fc.tuple(payer, mode, mode).map(([p, cheap, dear]) => new UptoRoutedCall(p, cheap, dear)));
  if (scheme('UptoJob'))
    arbs.push(
      fc
        .tuple(
          payer,
          fc.integer({ min: 1, max: 3 }),
          fc.boolean(),
          // a fault right after the settlement, half the time (the faults not turned off)
          fc.constantFrom<'Reorg' | 'LoseLastWrites' | undefined>(undefined, undefined, ...(['Reorg', 'LoseLastWrites'] as const).filter((f) => fault(f))),
        )
        .map(([p, n, lost, then]) => new UptoJob(p, n, lost, then)),
    );
  if (scheme('ChannelCall')) {
    const channelCall = fc.tuple(payer, fc.integer({ min: 1, max: 3 })).map(([p, n]): MoneyCommand => new ChannelCall(p, n));
    arbs.push(channelCall, channelCall);
  }
  if (scheme('VoucherReuse')) arbs.push(index.map((i) => new VoucherReuse(i)));
  if (scheme('VoucherReorder')) arbs.push(payer.map((p) => new VoucherReorder(p)));
  if (scheme('OverDeposit')) arbs.push(payer.map((p) => new OverDeposit(p)));
  if (scheme('ChannelPass')) arbs.push(fc.constant(new ChannelPass(false)));
  if (scheme('ChannelPassCrash')) arbs.push(fc.constant(new ChannelPass(true)));
  if (scheme('CooperativeRefund')) arbs.push(fc.constant(new CooperativeRefund()));
  if (scheme('TimedWithdrawal')) arbs.push(payer.map((p) => new TimedWithdrawal(p)));
  if (fault('Reorg')) arbs.push(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.boolean()).map(([d, w]) => new Reorg(d, w)));
  if (fault('ChannelReorg')) arbs.push(fc.tuple(payer, fc.boolean()).map(([p, w]) => new ChannelReorg(p, w)));
  if (fault('LoseLastWrites')) arbs.push(fc.constant(new LoseLastWrites()));
  if (fault('DropTransaction')) arbs.push(fc.tuple(payer, kind).map(([p, k]) => new DropTransaction(p, k)));
  if (fault('ClockSkew'))
    arbs.push(
      fc
        .tuple(payer, fc.constantFrom<'payer' | 'gateway'>('payer', 'gateway'), fc.constantFrom(-600, -200, -45, -20, 20, 45, 200, 600))
        .map(([p, w, s]) => new ClockSkew(p, w, s)),
    );
  return arbs;
}
