// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {ISignatureTransfer} from "./ISignatureTransfer.sol";

/// @title x402 `upto` settlement through Permit2 (dev-chain build of this project).
/// @notice The buyer signs a Permit2 `PermitWitnessTransferFrom` for a ceiling, with this contract as spender
/// and the witness `Witness(address to,address facilitator,uint256 validAfter)`. The facilitator named in the
/// witness later settles the amount actually used: at most the ceiling, only to `witness.to`, not before
/// `validAfter`, not after the permit's deadline, once per Permit2 nonce.
/// @dev Written in this repository to the interface `@x402/evm` 2.27 uses (ABI, witness type, errors) and the
/// rules of the x402 `upto` EVM scheme. Real networks use the official audited deployment at
/// 0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002; this one exists for the dev chain, the tests and the bench.
contract x402UptoPermit2Proxy is ReentrancyGuardTransient {
    /// @notice Who receives the payment, who may settle it, and from when (unix seconds).
    struct Witness {
        address to;
        address facilitator;
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
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    /// @notice Permit2's `witnessTypeString`: the tail of `PermitWitnessTransferFrom(...)` after `deadline,`,
    /// followed by the referenced types in alphabetical order.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    /// @notice Canonical Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3 on every chain).
    ISignatureTransfer public immutable PERMIT2;

    /// @notice A payment was settled through `settle`.
    event Settled();
    /// @notice A payment was settled through `settleWithPermit`.
    event SettledWithPermit();

    /// @notice The amount to settle is above the signed ceiling `permit.permitted.amount`.
    error AmountExceedsPermitted();
    /// @notice `witness.to` is the zero address.
    error InvalidDestination();
    /// @notice `owner` is the zero address.
    error InvalidOwner();
    /// @notice The constructor was given the zero address as Permit2.
    error InvalidPermit2Address();
    /// @notice `block.timestamp` is before `witness.validAfter`.
    error PaymentTooEarly();
    /// @notice The EIP-2612 allowance would not cover the signed ceiling.
    error Permit2612AmountMismatch();
    /// @notice The caller is not `witness.facilitator`.
    error UnauthorizedFacilitator();

    constructor(address permit2) {
        if (permit2 == address(0)) revert InvalidPermit2Address();
        PERMIT2 = ISignatureTransfer(permit2);
    }

    /// @notice Moves `amount` (token base units, at most `permit.permitted.amount`) from `owner` to
    /// `witness.to`. Only `witness.facilitator` may call, from `witness.validAfter` on; Permit2 checks the
    /// signature, the deadline and burns the nonce (a replay reverts there with `InvalidNonce`).
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /// @notice As `settle`, after first applying the buyer's EIP-2612 permit that lets Permit2 spend the
    /// token (gas-sponsored approval). A permit already used (or front-run) does not block the payment: the
    /// settlement then relies on the allowance already in place.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (permit2612.value < permit.permitted.amount) revert Permit2612AmountMismatch();
        try IERC20Permit(permit.permitted.token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
        _settle(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
