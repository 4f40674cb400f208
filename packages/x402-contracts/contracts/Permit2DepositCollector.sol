// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {IDepositCollector} from "./IDepositCollector.sol";
import {ISignatureTransfer} from "./ISignatureTransfer.sol";

/// @title Deposits into x402 batch-settlement channels through Permit2 (dev-chain build of this project).
/// @notice The `permit2` asset transfer method of `batch-settlement`, for any ERC-20: the payer signs a Permit2
/// `PermitWitnessTransferFrom` for exactly the deposit, with this collector as spender and the witness
/// `DepositWitness(bytes32 channelId)`, which binds the authorization to one channel. Permit2 moves the tokens
/// from the payer straight to x402BatchSettlement, once per Permit2 nonce, not after the deadline. Only
/// x402BatchSettlement may call `collect`, and it passes the channel id it computed from the channel's config.
/// @dev Written here to the interface `@x402/evm` 2.27 uses: collectorData =
/// abi.encode(uint256 nonce, uint256 deadline, bytes permit2Signature, bytes eip2612PermitData), the last either
/// empty or abi.encode(uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) (the
/// `eip2612GasSponsoring` extension). Real networks use the official deployment at
/// 0x4020425FAf3B746C082C2f942b4E5159887B0005.
contract Permit2DepositCollector is IDepositCollector {
    /// @notice The witness struct as EIP-712 hashes it.
    bytes32 public constant WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");

    /// @notice Permit2's `witnessTypeString` for the deposit witness (referenced types sorted by name).
    string public constant WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";

    /// @notice The x402BatchSettlement this collector serves.
    address public immutable BATCH_SETTLEMENT;
    /// @notice Canonical Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3 on every chain).
    ISignatureTransfer public immutable PERMIT2;

    /// @notice The caller is not BATCH_SETTLEMENT.
    error OnlyBatchSettlement();
    /// @notice The constructor was given the zero address for BATCH_SETTLEMENT.
    error InvalidBatchSettlementAddress();
    /// @notice The constructor was given the zero address for Permit2.
    error InvalidPermit2Address();
    /// @notice The EIP-2612 allowance would not cover the deposit.
    error Permit2612AmountMismatch();

    constructor(address batchSettlement, address permit2) {
        if (batchSettlement == address(0)) revert InvalidBatchSettlementAddress();
        if (permit2 == address(0)) revert InvalidPermit2Address();
        BATCH_SETTLEMENT = batchSettlement;
        PERMIT2 = ISignatureTransfer(permit2);
    }

    /// @inheritdoc IDepositCollector
    /// @dev An EIP-2612 permit already used (or front-run) does not block the deposit: Permit2 then relies on
    /// the allowance already in place.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlyBatchSettlement();
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory eip2612PermitData) =
            abi.decode(data, (uint256, uint256, bytes, bytes));
        if (eip2612PermitData.length > 0) _applyEip2612Permit(payer, token, amount, eip2612PermitData);
        PERMIT2.permitWitnessTransferFrom(
            ISignatureTransfer.PermitTransferFrom({
                permitted: ISignatureTransfer.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            ISignatureTransfer.SignatureTransferDetails({to: msg.sender, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(WITNESS_TYPEHASH, channelId)),
            WITNESS_TYPE_STRING,
            signature
        );
    }

    /// @dev Applies the payer's EIP-2612 permit giving Permit2 an allowance of at least `amount` on `token`;
    /// a permit that fails (already used or front-run) is ignored.
    function _applyEip2612Permit(address payer, address token, uint256 amount, bytes memory data) private {
        (uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) = abi.decode(data, (uint256, uint256, uint8, bytes32, bytes32));
        if (value < amount) revert Permit2612AmountMismatch();
        try IERC20Permit(token).permit(payer, address(PERMIT2), value, deadline, v, r, s) {} catch {}
    }
}
