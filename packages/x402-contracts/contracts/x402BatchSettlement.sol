// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IDepositCollector} from "./IDepositCollector.sol";

/// @title x402 `batch-settlement` channels (dev-chain build of this project).
/// @notice Unidirectional payment channels: a payer deposits once (the first deposit creates the channel),
/// signs cumulative vouchers off-chain, and the receiver side claims them in batches (accounting only) and
/// settles claimed funds to the receiver in one transfer. Cooperative refunds return unclaimed escrow; a
/// timed withdrawal is the payer's escape hatch after `withdrawDelay`.
/// @dev Written in this repository to the interface `@x402/evm` 2.27 uses (ABI, EIP-712 domain
/// `x402 Batch Settlement`/`1`, types ChannelConfig, Voucher, Refund, ClaimBatch) and the rules of the x402
/// `batch-settlement` EVM scheme. No immutables: the EIP-712 domain separator is computed from
/// `address(this)` and `block.chainid` at each use, so it follows the contract's address. Real networks use
/// the official audited deployment at 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003.
contract x402BatchSettlement is ReentrancyGuardTransient, Multicall {
    using SafeERC20 for IERC20;

    /// @notice A channel's immutable terms; its EIP-712 hash is the channel id.
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    /// @notice A payer's cumulative authorization: the receiver may claim up to `maxClaimableAmount` in total.
    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @notice One claim row: the voucher, the payer's signature on it, and the new cumulative total claimed.
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct WithdrawalState {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");

    /// @notice EIP-712 type hash of ChannelConfig.
    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 private constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 private constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 private constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    /// @notice Shortest and longest timed-withdrawal delay: 15 minutes and 30 days.
    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 2_592_000;

    /// @notice Per channel id: escrowed balance (deposits minus refunds and withdrawals) and cumulative claims.
    mapping(bytes32 channelId => ChannelState) public channels;
    /// @notice Per channel id: the pending timed withdrawal, if any.
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    /// @notice Per channel id: the nonce the next `refundWithSignature` must carry.
    mapping(bytes32 channelId => uint256) public refundNonce;
    /// @notice Per receiver and token: claimed and settled totals.
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed collector, uint128 amount, uint128 balance);
    event Claimed(bytes32 indexed channelId, uint128 amount, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, uint128 amount, uint256 nonce);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt);
    event WithdrawFinalized(bytes32 indexed channelId, uint128 amount);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);

    error InvalidWithdrawDelay();
    error InvalidReceiverAuthorizer();
    error InvalidPayer();
    error ZeroAmount();
    error DepositNotReceived();
    error InvalidVoucherSignature();
    error ClaimExceedsVoucher();
    error ClaimExceedsBalance();
    error UnauthorizedClaimer();
    error MixedReceiverAuthorizers();
    error InvalidAuthorizerSignature();
    error EmptyClaims();
    error UnauthorizedRefunder();
    error InvalidRefundNonce();
    error UnauthorizedWithdrawer();
    error WithdrawalAlreadyPending();
    error NoPendingWithdrawal();
    error WithdrawDelayNotElapsed();
    error WithdrawExceedsAvailable();

    // ---- deposits ----

    /// @notice Adds `amount` to the channel of `config` through `collector`, which pulls it from the payer with
    /// the authorization in `collectorData`. The first deposit creates the channel. Anyone may submit (gas
    /// sponsoring); the funds can only come from `config.payer`'s signed authorization.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert InvalidWithdrawDelay();
        }
        if (config.receiverAuthorizer == address(0)) revert InvalidReceiverAuthorizer();
        if (config.payer == address(0)) revert InvalidPayer();
        if (amount == 0) revert ZeroAmount();
        bytes32 channelId = getChannelId(config);
        IERC20 token = IERC20(config.token);
        uint256 before = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (token.balanceOf(address(this)) != before + amount) revert DepositNotReceived();
        ChannelState storage ch = channels[channelId];
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelCreated(channelId, config);
        ch.balance += amount;
        emit Deposited(channelId, collector, amount, ch.balance);
    }

    // ---- claims ----

    /// @notice Claims each row; `msg.sender` must be the row's receiver or receiverAuthorizer.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyClaims();
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata c = voucherClaims[i].voucher.channel;
            if (msg.sender != c.receiver && msg.sender != c.receiverAuthorizer) revert UnauthorizedClaimer();
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Claims each row on the strength of an EIP-712 `ClaimBatch` signature by the rows' common
    /// receiverAuthorizer; anyone may relay.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyClaims();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert MixedReceiverAuthorizers();
        }
        if (!SignatureChecker.isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidAuthorizerSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    /// @dev Raises the channel's cumulative claim to `row.totalClaimed`: never above the voucher's
    /// `maxClaimableAmount` nor the channel balance; a row at or below what is already claimed changes nothing
    /// (vouchers are cumulative, so a replayed or stale claim is a no-op).
    function _claim(VoucherClaim calldata row) private {
        ChannelConfig calldata c = row.voucher.channel;
        bytes32 channelId = getChannelId(c);
        uint128 maxClaimable = row.voucher.maxClaimableAmount;
        if (row.totalClaimed > maxClaimable) revert ClaimExceedsVoucher();
        _checkVoucherSignature(c, getVoucherDigest(channelId, maxClaimable), row.signature);
        ChannelState storage ch = channels[channelId];
        if (row.totalClaimed > ch.balance) revert ClaimExceedsBalance();
        if (row.totalClaimed <= ch.totalClaimed) return;
        uint128 delta = row.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = row.totalClaimed;
        receivers[c.receiver][c.token].totalClaimed += delta;
        emit Claimed(channelId, delta, row.totalClaimed);
    }

    function _checkVoucherSignature(ChannelConfig calldata c, bytes32 digest, bytes calldata signature) private view {
        bool ok;
        if (c.payerAuthorizer != address(0)) {
            (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature);
            ok = err == ECDSA.RecoverError.NoError && signer == c.payerAuthorizer;
        } else {
            ok = SignatureChecker.isValidSignatureNow(c.payer, digest, signature);
        }
        if (!ok) revert InvalidVoucherSignature();
    }

    // ---- settlement ----

    /// @notice Transfers everything claimed but not yet settled for `receiver` and `token` to `receiver`, in one
    /// transfer. Permissionless; a no-op when nothing is owed.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        if (amount == 0) return;
        r.totalSettled = r.totalClaimed;
        IERC20(token).safeTransfer(receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ---- refunds ----

    /// @notice Cooperative refund by the receiver or its receiverAuthorizer: up to `amount` of the unclaimed
    /// escrow back to the payer. Advances the refund nonce (invalidating signed refunds for the old one).
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert UnauthorizedRefunder();
        _refund(config, getChannelId(config), amount);
    }

    /// @notice Cooperative refund on the strength of the receiverAuthorizer's EIP-712 `Refund(channelId, nonce,
    /// amount)` signature; anyone may relay. `nonce` must be the channel's current refund nonce, so a signature
    /// works once.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (
            !SignatureChecker.isValidSignatureNow(
                config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
            )
        ) revert InvalidAuthorizerSignature();
        _refund(config, channelId, amount);
    }

    /// @dev The nonce advances first, before the amount is capped to the unclaimed escrow, so even a refund that
    /// moves nothing uses it up. A pending withdrawal shrinks by the refund, or ends when covered.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        uint256 nonce = refundNonce[channelId]++;
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        if (amount > available) amount = available;
        if (amount == 0) return;
        ch.balance -= amount;
        WithdrawalState storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt != 0) {
            if (amount >= w.amount) delete pendingWithdrawals[channelId];
            else w.amount -= amount;
        }
        IERC20(config.token).safeTransfer(config.payer, amount);
        emit Refunded(channelId, amount, nonce);
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    // ---- timed withdrawal ----

    /// @notice Starts a timed withdrawal of `amount` (at most the unclaimed escrow now). Only the payer or its
    /// payerAuthorizer. The receiver side may still claim vouchers until it is finalized.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _checkWithdrawer(config);
        bytes32 channelId = getChannelId(config);
        if (pendingWithdrawals[channelId].initiatedAt != 0) revert WithdrawalAlreadyPending();
        ChannelState storage ch = channels[channelId];
        if (amount == 0) revert ZeroAmount();
        if (amount > ch.balance - ch.totalClaimed) revert WithdrawExceedsAvailable();
        uint40 nowTs = uint40(block.timestamp);
        pendingWithdrawals[channelId] = WithdrawalState({amount: amount, initiatedAt: nowTs});
        emit WithdrawInitiated(channelId, amount, nowTs);
    }

    /// @notice Completes a timed withdrawal once `withdrawDelay` has passed since it started: transfers the
    /// recorded amount, capped to the unclaimed escrow left, to the payer. Only the payer or its payerAuthorizer.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _checkWithdrawer(config);
        bytes32 channelId = getChannelId(config);
        WithdrawalState memory w = pendingWithdrawals[channelId];
        if (w.initiatedAt == 0) revert NoPendingWithdrawal();
        if (block.timestamp < uint256(w.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();
        delete pendingWithdrawals[channelId];
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 amount = w.amount > available ? available : w.amount;
        ch.balance -= amount;
        if (amount > 0) IERC20(config.token).safeTransfer(config.payer, amount);
        emit WithdrawFinalized(channelId, amount);
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    function _checkWithdrawer(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer)) {
            revert UnauthorizedWithdrawer();
        }
    }

    // ---- EIP-712 views ----

    /// @notice The channel id: the EIP-712 hash of `config` under this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTyped(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    /// @notice The digest a payer signs for a voucher.
    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTyped(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    /// @notice The digest a receiverAuthorizer signs for a cooperative refund.
    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTyped(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice The digest a receiverAuthorizer signs for `claimWithSignature`: `ClaimBatch` over one
    /// `ClaimEntry(channelId, maxClaimableAmount, totalClaimed)` per row.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(voucherClaims[i].voucher.channel),
                    voucherClaims[i].voucher.maxClaimableAmount,
                    voucherClaims[i].totalClaimed
                )
            );
        }
        return _hashTyped(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    /// @dev EIP-712 digest under `x402 Batch Settlement`/`1`, this chain and this contract's own address.
    function _hashTyped(bytes32 structHash) private view returns (bytes32) {
        bytes32 domainSeparator = keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
        return MessageHashUtils.toTypedDataHash(domainSeparator, structHash);
    }
}
