import { getTypesForEIP712Domain, hashTypedData, validateTypedData, type Hex, type TypedDataDefinition, type TypedData, type TypedDataParameter } from 'viem';
import { keccak256Bytes } from './keccak.js';

/** A field type the flat encoder handles: one 32-byte word, or the keccak of a string. */
const ATOMIC = /^(address|bool|string|u?int(\d{1,3})|bytes([1-9]|[12]\d|3[0-2]))$/;
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;
const TWO_256 = 1n << 256n;
const utf8 = new TextEncoder();

/** Type hash by encoded type string (`Name(type name,...)`): a handful of types, computed once each. */
const typeHashes = new Map<string, Uint8Array>();

/** Thrown inside the flat encoder for a shape it does not handle: the caller falls back to viem. */
class NotFlat extends Error {}

/**
 * The EIP-712 digest of `typedData` (`keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message))`),
 * byte for byte viem's `hashTypedData` and with its validation (viem's `validateTypedData`: address
 * checksums, integer ranges, bytesN sizes, the same errors), hashed with the WebAssembly keccak256
 * ({@link keccak256Bytes}). Structs whose fields are all atomic (`address`, `bool`, `string`,
 * `uintN`, `intN`, `bytesN`) are encoded here: x402's `TransferWithAuthorization`, `Offer` and
 * `Receipt`, and the domain. Anything else (nested structs, arrays, `bytes`) goes to viem's
 * `hashTypedData`. viem's pure-JS keccak made this 0.3-0.5 ms of CPU per digest on the paid path
 * (bench/README.md "Paid execute"); `eip712.unit.test.ts` compares both.
 * @throws viem's errors for malformed typed data.
 */
export function hashTypedDataFast<const T extends TypedData | Record<string, unknown>, P extends keyof T | 'EIP712Domain'>(
  typedData: TypedDataDefinition<T, P>,
): Uint8Array {
  const {
    domain = {},
    message,
    primaryType,
  } = typedData as unknown as { domain?: Record<string, unknown>; message?: Record<string, unknown>; primaryType: string };
  const types = { EIP712Domain: getTypesForEIP712Domain({ domain }), ...(typedData.types as Record<string, readonly TypedDataParameter[]>) };
  validateTypedData({ domain, message, primaryType, types } as never);
  try {
    const out = new Uint8Array(66);
    out[0] = 0x19;
    out[1] = 0x01;
    out.set(hashStruct('EIP712Domain', types, domain), 2);
    if (primaryType === 'EIP712Domain') return keccak256Bytes(out.subarray(0, 34));
    out.set(hashStruct(primaryType, types, message ?? {}), 34);
    return keccak256Bytes(out);
  } catch (e) {
    if (!(e instanceof NotFlat)) throw e;
    return Buffer.from(hashTypedData(typedData).slice(2), 'hex');
  }
}

function hashStruct(name: string, types: Record<string, readonly TypedDataParameter[]>, data: Record<string, unknown>): Uint8Array {
  const fields = types[name];
  if (!fields) throw new NotFlat();
  const encoded = new Uint8Array(32 * (fields.length + 1));
  encoded.set(typeHash(name, fields), 0);
  fields.forEach((f, i) => {
    encoded.set(encodeField(f.type, data[f.name], types), 32 * (i + 1));
  });
  return keccak256Bytes(encoded);
}

function typeHash(name: string, fields: readonly TypedDataParameter[]): Uint8Array {
  const encodedType = `${name}(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`;
  let h = typeHashes.get(encodedType);
  if (!h) {
    h = keccak256Bytes(utf8.encode(encodedType));
    if (typeHashes.size < 256) typeHashes.set(encodedType, h);
  }
  return h;
}

/** One field as its 32-byte word; NotFlat for what viem should encode (structs, arrays, `bytes`, unusual values). */
function encodeField(type: string, value: unknown, types: Record<string, readonly TypedDataParameter[]>): Uint8Array {
  const m = ATOMIC.exec(type);
  if (!m || Object.hasOwn(types, type)) throw new NotFlat();
  const word = new Uint8Array(32);
  if (type === 'string') {
    if (typeof value !== 'string') throw new NotFlat();
    return keccak256Bytes(utf8.encode(value));
  }
  if (type === 'address') {
    if (typeof value !== 'string' || !HEX_ADDRESS.test(value)) throw new NotFlat();
    word.set(Buffer.from(value.slice(2), 'hex'), 12);
    return word;
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw new NotFlat();
    word[31] = value ? 1 : 0;
    return word;
  }
  if (m[3] !== undefined) {
    // bytesN, right-padded (its size was checked by validateTypedData)
    if (typeof value !== 'string' || !HEX_BYTES.test(value) || (value.length - 2) / 2 !== Number(m[3])) throw new NotFlat();
    word.set(Buffer.from(value.slice(2), 'hex'), 0);
    return word;
  }
  // uintN / intN (range checked by validateTypedData), big-endian two's complement
  if (typeof value !== 'bigint' && !(typeof value === 'number' && Number.isSafeInteger(value))) throw new NotFlat();
  let n = BigInt(value);
  if (n < 0n) {
    if (type.startsWith('u')) throw new NotFlat();
    n += TWO_256;
  }
  const hex = n.toString(16).padStart(64, '0');
  if (hex.length !== 64) throw new NotFlat();
  word.set(Buffer.from(hex, 'hex'), 0);
  return word;
}

/** {@link hashTypedDataFast} as 0x-prefixed hex, like viem's `hashTypedData`. */
export function hashTypedDataFastHex<const T extends TypedData | Record<string, unknown>, P extends keyof T | 'EIP712Domain'>(
  typedData: TypedDataDefinition<T, P>,
): Hex {
  return `0x${Buffer.from(hashTypedDataFast(typedData)).toString('hex')}`;
}
