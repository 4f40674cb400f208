import { ByteVectorType, ContainerType, UintBigintType } from '@chainsafe/ssz';
import { ssz } from '@lodestar/types';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { bytesToHex, hexToBytes, type Hex } from 'viem';

/** `DOMAIN_APPLICATION_BUILDER` of the builder spec (ethereum/builder-specs): `0x00000001`. */
export const DOMAIN_APPLICATION_BUILDER = '0x00000001' as const;
/** The Ethereum consensus BLS signature ciphersuite (proof-of-possession scheme, signatures in G2). */
export const ETH_BLS_DST = 'BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_';

const Bytes4 = new ByteVectorType(4);
const Bytes20 = new ByteVectorType(20);
const Bytes32 = new ByteVectorType(32);
const Bytes48 = new ByteVectorType(48);
const Uint64 = new UintBigintType(8);
const Uint256 = new UintBigintType(32);

/**
 * SSZ `BidTrace` (builder-specs, `bellatrix/builder.md`): what a relay submission signs. Its JSON
 * (`toJson`/`fromJson`) is the relay API's: snake_case keys, decimal strings, 0x hex bytes.
 */
export const BidTraceType = new ContainerType(
  {
    slot: Uint64,
    parentHash: Bytes32,
    blockHash: Bytes32,
    builderPubkey: Bytes48,
    proposerPubkey: Bytes48,
    proposerFeeRecipient: Bytes20,
    gasLimit: Uint64,
    gasUsed: Uint64,
    value: Uint256,
  },
  { typeName: 'BidTrace', jsonCase: 'eth2' },
);

const ForkDataType = new ContainerType({ current_version: Bytes4, genesis_validators_root: Bytes32 });
const SigningDataType = new ContainerType({ object_root: Bytes32, domain: Bytes32 });

/** A BidTrace as the relay API writes it in JSON: 0x hex byte strings, decimal strings for integers. */
export interface BidTraceJson {
  slot: string;
  parent_hash: Hex;
  block_hash: Hex;
  builder_pubkey: Hex;
  proposer_pubkey: Hex;
  proposer_fee_recipient: Hex;
  gas_limit: string;
  gas_used: string;
  /** Wei paid to the proposer. */
  value: string;
}

/**
 * `compute_domain(DOMAIN_APPLICATION_BUILDER, fork_version, genesis_validators_root = 0x00..00)`
 * (builder-specs: the builder domain always uses the genesis fork version and a zero root).
 * Mainnet (`0x00000000`) gives `0x00000001f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a9`.
 */
export function computeBuilderDomain(genesisForkVersion: Hex = '0x00000000'): Uint8Array {
  const forkDataRoot = ForkDataType.hashTreeRoot({ current_version: hexToBytes(genesisForkVersion), genesis_validators_root: new Uint8Array(32) });
  const domain = new Uint8Array(32);
  domain.set(hexToBytes(DOMAIN_APPLICATION_BUILDER), 0);
  domain.set(forkDataRoot.subarray(0, 28), 4);
  return domain;
}

/** `compute_signing_root(bid_trace, domain)` = hash_tree_root(SigningData{hash_tree_root(bid_trace), domain}). */
export function bidTraceSigningRoot(message: BidTraceJson, domain: Uint8Array): Uint8Array {
  const objectRoot = BidTraceType.hashTreeRoot(BidTraceType.fromJson(message));
  return SigningDataType.hashTreeRoot({ object_root: objectRoot, domain });
}

/** The 48-byte compressed G1 public key of a 32-byte BLS secret key, as 0x hex. */
export function blsPublicKey(secretKey: Hex): Hex {
  return bytesToHex(bls12_381.longSignatures.getPublicKey(hexToBytes(secretKey)).toBytes(true));
}

/** A fresh random BLS secret key (development only). */
export function randomBlsSecretKey(): Hex {
  return bytesToHex(bls12_381.utils.randomSecretKey());
}

/** BLS signature (Ethereum's G2 DST) of a 32-byte signing root: the 96-byte compressed signature as 0x hex. */
function signRoot(root: Uint8Array, secretKey: Hex): Hex {
  const bls = bls12_381.longSignatures;
  return bytesToHex(bls.Signature.toBytes(bls.sign(bls.hash(root, ETH_BLS_DST), hexToBytes(secretKey))));
}

/** Whether `signature` by `pubkey` signs the root `signingRoot()` computes; false on any malformed input, the message's included. */
function verifyRoot(signingRoot: () => Uint8Array, signature: Hex, pubkey: Hex): boolean {
  try {
    const bls = bls12_381.longSignatures;
    return bls.verify(hexToBytes(signature), bls.hash(signingRoot(), ETH_BLS_DST), hexToBytes(pubkey));
  } catch {
    return false;
  }
}

/** Signs `message` under `domain` with the builder's BLS key: the 96-byte compressed G2 signature as 0x hex. */
export function signBidTrace(message: BidTraceJson, secretKey: Hex, domain: Uint8Array): Hex {
  return signRoot(bidTraceSigningRoot(message, domain), secretKey);
}

/** Verifies a BidTrace signature by `message.builder_pubkey` under `domain`; false on any malformed input. */
export function verifyBidTrace(message: BidTraceJson, signature: Hex, domain: Uint8Array): boolean {
  return verifyRoot(() => bidTraceSigningRoot(message, domain), signature, message.builder_pubkey);
}

/**
 * A validator's registration with the builder network (builder-specs `ValidatorRegistrationV1`),
 * as the relay API writes it: `fee_recipient`, `gas_limit` (decimal), `timestamp` (UNIX seconds,
 * decimal), `pubkey` (48 bytes hex).
 */
export interface ValidatorRegistrationJson {
  fee_recipient: Hex;
  gas_limit: string;
  timestamp: string;
  pubkey: Hex;
}

function registrationSigningRoot(message: ValidatorRegistrationJson, domain: Uint8Array): Uint8Array {
  const type = ssz.bellatrix.ValidatorRegistrationV1;
  return SigningDataType.hashTreeRoot({ object_root: type.hashTreeRoot(type.fromJson(message)), domain });
}

/** Signs a validator registration under DOMAIN_APPLICATION_BUILDER with the validator's BLS key (what a proposer's mev-boost sends to relays). */
export function signValidatorRegistration(message: ValidatorRegistrationJson, secretKey: Hex, domain: Uint8Array): Hex {
  return signRoot(registrationSigningRoot(message, domain), secretKey);
}

/** Verifies a validator registration signature by `message.pubkey` under `domain`; false on any malformed input. */
export function verifyValidatorRegistration(message: ValidatorRegistrationJson, signature: Hex, domain: Uint8Array): boolean {
  return verifyRoot(() => registrationSigningRoot(message, domain), signature, message.pubkey);
}
