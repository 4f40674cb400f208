// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title What x402BatchSettlement asks of a deposit collector (this project's own interface).
/// @notice A collector pulls `amount` of `token` from `payer` with the payer's signed authorization in
/// `data` and transfers it to the calling x402BatchSettlement, which checks its balance grew by `amount`.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}
