// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {ISignatureTransfer} from "./ISignatureTransfer.sol";

/// @title x402 `exact` settlement through Permit2 (dev-chain build of this project).
/// @notice The `permit2` asset transfer method of the `exact` scheme, for tokens without EIP-3009: the buyer
/// signs a Permit2 `PermitWitnessTransferFrom` for exactly the price, with this contract as spender and the
/// witness `Witness(address to,uint256 validAfter)`. Anyone (the facilitator) may then submit it: the whole
/// permitted amount goes to `witness.to`, not before `validAfter`, not after the permit's deadline, once per
/// Permit2 nonce. The submitter chooses neither the amount nor the destination.
/// @dev Written in this repository to the interface `@x402/evm` 2.27 uses (ABI, witness type, errors) and the
/// rules of the x402 `exact` EVM scheme (Permit2 section). Real networks use the official audited deployment at
/// 0x402085c248EeA27D92E8b30b2C58ed07f9E20001; this one exists for the dev chain, the tests and the bench.
contract x402ExactPermit2Proxy is ReentrancyGuardTransient {
    /// @notice Who receives the payment, and from when (unix seconds).
    struct Witness {
        address to;
        uint256 validAfter;
    }

    /// @notice An EIP-2612 permit by the buyer giving Permit2 an allowance of `value` on the token.
    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    /// @notice The witness struct as EIP-712 hashes it.
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    /// @notice Permit2's `witnessTypeString`: the tail of `PermitWitnessTransferFrom(...)` after `deadline,`,
    /// then the referenced struct types sorted by name (EIP-712 `encodeType`).
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";

    /// @notice Canonical Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3 on every chain).
    ISignatureTransfer public immutable PERMIT2;

    /// @notice A payment was settled through `settle`.
    event Settled();
    /// @notice A payment was settled through `settleWithPermit`.
    event SettledWithPermit();

    /// @notice The permit moves nothing (`permit.permitted.amount` is zero).
    error InvalidAmount();
    /// @notice `witness.to` is the zero address.
    error InvalidDestination();
    /// @notice `owner` is the zero address.
    error InvalidOwner();
    /// @notice The constructor was given the zero address as Permit2.
    error InvalidPermit2Address();
    /// @notice `block.timestamp` is before `witness.validAfter`.
    error PaymentTooEarly();
    /// @notice The EIP-2612 allowance would not cover the permitted amount.
    error Permit2612AmountMismatch();

    constructor(address permit2) {
        if (permit2 == address(0)) revert InvalidPermit2Address();
        PERMIT2 = ISignatureTransfer(permit2);
    }

    /// @notice Moves exactly `permit.permitted.amount` (token base units) from `owner` to `witness.to`, from
    /// `witness.validAfter` on. Permit2 checks the signature over the permit, this contract as spender and the
    /// witness, the deadline, and burns the nonce (a replay reverts there with `InvalidNonce`).
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, owner, witness, signature);
        emit Settled();
    }

    /// @notice As `settle`, after first applying the buyer's EIP-2612 permit that lets Permit2 spend the token
    /// (the `eip2612GasSponsoring` extension). A permit already used (or front-run) does not block the payment:
    /// the settlement then relies on the allowance already in place.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (permit2612.value < permit.permitted.amount) revert Permit2612AmountMismatch();
        try IERC20Permit(permit.permitted.token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
        _settle(permit, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (permit.permitted.amount == 0) revert InvalidAmount();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: permit.permitted.amount}),
            owner,
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter)),
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
