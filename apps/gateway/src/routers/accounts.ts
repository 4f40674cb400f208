import { AuthError } from '@acg/identity';
import { AccountView, Address, DepositRequest, DepositResponse } from '@acg/schemas';
import { ulid } from 'ulid';
import { z } from 'zod';
import { depositBazaar } from '../paidRoute/bazaar.js';
import { router } from '../trpc/init.js';
import { bearerProcedure, paidProcedure, publicProcedure } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

const authError = (e: unknown) => {
  if (e instanceof AuthError) return problem(e.code === 'invalid_address' || e.code === 'invalid_message' ? 400 : 401, e.message, { reason: e.code });
  return e;
};

/** Decimal USDC → integer base units; throws a 400 problem outside 0.01..10,000 or beyond 6 decimals. */
function depositBaseUnits(amount: string | number): bigint {
  const s = typeof amount === 'number' ? amount.toFixed(6) : amount;
  const m = /^(\d+)(?:\.(\d{1,6})0*)?$/.exec(s.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''));
  if (!m) throw problem(400, 'amount_usdc must be a positive decimal with at most 6 decimals.');
  const units = BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
  if (units < 10_000n || units > 10_000_000_000n) throw problem(400, 'amount_usdc must be between 0.01 and 10000.');
  return units;
}

/** SIWE sign-in, bearer tokens and the metered account (docs/decisions.md "Accounts and bearer tokens"). */
export const accountsRouter = router({
  nonce: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/v1/auth/nonce', tags: ['accounts'], summary: 'Get a Sign-In with Ethereum (EIP-4361) nonce and the message to sign' },
    })
    .input(z.object({ address: Address }))
    .output(z.object({ nonce: z.string(), message: z.string(), expires_at: z.string() }))
    .mutation(async ({ ctx, input }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      try {
        return await ctx.services.siwe.challenge(input.address);
      } catch (e) {
        throw authError(e);
      }
    }),

  token: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/auth/token',
        tags: ['accounts'],
        summary: 'Exchange a signed sign-in message for a bearer token',
        errorResponses: { 400: 'Not a sign-in message', 401: 'Expired, wrong domain/chain, unknown nonce or bad signature' },
      },
    })
    .input(z.object({ message: z.string().min(1).max(4000), signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'must be 0x-prefixed hex') }))
    .output(z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.int() }))
    .mutation(async ({ ctx, input }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      try {
        const address = await ctx.services.siwe.verify(input.message, input.signature as `0x${string}`);
        return await ctx.services.tokens.issue(address);
      } catch (e) {
        throw authError(e);
      }
    }),

  revoke: bearerProcedure
    .meta({ openapi: { method: 'POST', path: '/v1/auth/revoke', tags: ['accounts'], summary: 'Revoke the bearer token used for this call', protect: true } })
    .input(z.object({}))
    .output(z.object({ revoked: z.literal(true) }))
    .mutation(async ({ ctx }) => {
      await ctx.services.tokens.revoke(ctx.token);
      return { revoked: true as const };
    }),

  account: bearerProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/account', tags: ['accounts'], summary: 'Metered account: balance and usage (USDC base units)', protect: true },
    })
    .input(z.object({}))
    .output(AccountView)
    .query(async ({ ctx }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      return ctx.services.ledger.view(ctx.account);
    }),

  deposit: paidProcedure({
    input: DepositRequest,
    // the amount is checked (400) before any payment, and is the price
    prepare: (input) => ({ units: depositBaseUnits(input.amount_usdc) }),
    route: 'deposit',
    path: '/v1/account/deposit',
    price: (_input, ctx) => ctx.units,
    description: (input) => `Deposit ${input.amount_usdc} USDC into your metered account`,
    extensions: () => depositBazaar(),
    newOperationId: () => `dep_${ulid()}`,
  })
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/account/deposit',
        tags: ['accounts'],
        summary: "Top up the payer's metered account, paid with x402 (the amount is the price)",
        errorResponses: { 400: 'Bad amount', 402: 'Payment required (x402 challenge for amount_usdc)' },
      },
    })
    .output(DepositResponse)
    .mutation(async ({ ctx }) => {
      if (ctx.replay) return DepositResponse.parse(ctx.replay);
      const p = ctx.payment!;
      await ctx.services.ledger.credit(p.payer, BigInt(p.amount), 'deposit', ctx.operationId);
      return { ...(await ctx.services.ledger.view(p.payer)), deposit: { amount: p.amount, tx_hash: p.txHash } };
    }),
});
