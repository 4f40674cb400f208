// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title The part of Uniswap Permit2's signature-transfer interface the x402 contracts call.
/// @notice Written here from Permit2's public ABI (function and struct shapes only).
interface ISignatureTransfer {
    /// @notice A token and the most of it the owner lets the spender move.
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// @notice The signed permit: what may be moved, under which unordered nonce, until when.
    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    /// @notice Where the spender sends the tokens and how many (at most `permitted.amount`).
    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    /// @notice Moves `transferDetails.requestedAmount` from `owner` to `transferDetails.to` if `signature`
    /// signs the permit, `msg.sender` as spender and the witness; burns the nonce.
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}
