// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IDepositCollector} from "./IDepositCollector.sol";

/// @notice ERC-3009 `receiveWithAuthorization` (USDC FiatTokenV2_2, bytes-signature form).
interface IERC3009 {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @title Deposits into x402 batch-settlement channels through ERC-3009 (dev-chain build of this project).
/// @notice The payer signs `ReceiveWithAuthorization(from = payer, to = this collector, value = amount,
/// validAfter, validBefore, nonce)` with `nonce = keccak256(abi.encode(channelId, salt))`, which binds the
/// authorization to one channel. Only x402BatchSettlement may call `collect`.
/// @dev Written here to the interface `@x402/evm` 2.27 uses (collectorData = abi.encode(uint256 validAfter,
/// uint256 validBefore, uint256 salt, bytes signature)). Real networks use the official deployment at
/// 0x4020806089470a89826cB9fB1f4059150b550004.
contract ERC3009DepositCollector is IDepositCollector {
    using SafeERC20 for IERC20;

    /// @notice The x402BatchSettlement this collector serves.
    address public immutable BATCH_SETTLEMENT;

    /// @notice The caller is not BATCH_SETTLEMENT.
    error OnlyBatchSettlement();
    /// @notice The constructor was given the zero address.
    error InvalidBatchSettlementAddress();

    constructor(address batchSettlement) {
        if (batchSettlement == address(0)) revert InvalidBatchSettlementAddress();
        BATCH_SETTLEMENT = batchSettlement;
    }

    /// @inheritdoc IDepositCollector
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlyBatchSettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) = abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IERC3009(token).receiveWithAuthorization(payer, address(this), amount, validAfter, validBefore, nonce, signature);
        IERC20(token).safeTransfer(msg.sender, amount);
    }
}
