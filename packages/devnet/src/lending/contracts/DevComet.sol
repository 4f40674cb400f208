// SPDX-License-Identifier: BUSL-1.1
pragma solidity 0.8.19;

interface IERC20Like {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function balanceOf(address owner) external view returns (uint256);
}

interface IPriceFeedLike {
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
}

/// @title DevComet
/// @notice A Compound III (Comet) ABI-compatible market of our own for the dev chain. Storage layout
/// differs from Comet, but every function and event used by the liquidation search has Comet's
/// signature and Comet's arithmetic (compound-finance/comet, contracts/Comet.sol and CometCore.sol):
/// principal/present value with `baseSupplyIndex`/`baseBorrowIndex` (scale 1e15), prices from
/// Chainlink feeds (8 decimals), factors scaled 1e18, `isLiquidatable` with `liquidateCollateralFactor`
/// over the stored (not accrued) indices, `absorb` of the whole position valued at `liquidationFactor`,
/// and `buyCollateral` at the store-front discount `storeFrontPriceFactor * (1 - liquidationFactor)`
/// while reserves are below `targetReserves`.
/// Simplifications: constant per-second supply/borrow rates instead of the utilization kink model,
/// no rewards tracking, no pause guardian, no allowances/permits, no supply caps enforcement.
contract DevComet {
    struct AssetInfo {
        uint8 offset;
        address asset;
        address priceFeed;
        uint64 scale;
        uint64 borrowCollateralFactor;
        uint64 liquidateCollateralFactor;
        uint64 liquidationFactor;
        uint128 supplyCap;
    }

    struct TotalsBasic {
        uint64 baseSupplyIndex;
        uint64 baseBorrowIndex;
        uint64 trackingSupplyIndex;
        uint64 trackingBorrowIndex;
        uint104 totalSupplyBase;
        uint104 totalBorrowBase;
        uint40 lastAccrualTime;
        uint8 pauseFlags;
    }

    struct UserBasic {
        int104 principal;
        uint64 baseTrackingIndex;
        uint64 baseTrackingAccrued;
        uint16 assetsIn;
        uint8 _reserved;
    }

    struct UserCollateral {
        uint128 balance;
        uint128 _reserved;
    }

    struct TotalsCollateral {
        uint128 totalSupplyAsset;
        uint128 _reserved;
    }

    error Absurd();
    error BadPrice();
    error BorrowTooSmall();
    error InsufficientReserves();
    error NotCollateralized();
    error NotForSale();
    error NotLiquidatable();
    error TooMuchSlippage();
    error BadAsset();

    event Supply(address indexed from, address indexed dst, uint256 amount);
    event Transfer(address indexed from, address indexed to, uint256 amount);
    event Withdraw(address indexed src, address indexed to, uint256 amount);
    event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint256 amount);
    event TransferCollateral(address indexed from, address indexed to, address indexed asset, uint256 amount);
    event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint256 amount);
    event AbsorbDebt(address indexed absorber, address indexed borrower, uint256 basePaidOut, uint256 usdValue);
    event AbsorbCollateral(
        address indexed absorber, address indexed borrower, address indexed asset, uint256 collateralAbsorbed, uint256 usdValue
    );
    event BuyCollateral(address indexed buyer, address indexed asset, uint256 baseAmount, uint256 collateralAmount);

    uint64 internal constant FACTOR_SCALE = 1e18;
    uint64 internal constant BASE_INDEX_SCALE = 1e15;
    uint64 internal constant PRICE_SCALE = 1e8;

    address public immutable baseToken;
    address public immutable baseTokenPriceFeed;
    uint256 public immutable baseScale;
    uint64 public immutable storeFrontPriceFactor;
    uint256 public immutable targetReserves;
    uint256 public immutable baseBorrowMin;
    uint64 public immutable borrowPerSecondInterestRate;
    uint64 public immutable supplyPerSecondInterestRate;
    uint8 public numAssets;

    AssetInfo[] internal assetList;
    TotalsBasic internal totals;
    mapping(address => UserBasic) public userBasic;
    mapping(address => mapping(address => UserCollateral)) public userCollateral;
    mapping(address => TotalsCollateral) public totalsCollateral;

    constructor(
        address baseToken_,
        address baseTokenPriceFeed_,
        uint8 baseDecimals,
        uint64 storeFrontPriceFactor_,
        uint256 targetReserves_,
        uint256 baseBorrowMin_,
        uint64 borrowRate,
        uint64 supplyRate,
        AssetInfo[] memory assets_
    ) {
        baseToken = baseToken_;
        baseTokenPriceFeed = baseTokenPriceFeed_;
        baseScale = 10 ** baseDecimals;
        storeFrontPriceFactor = storeFrontPriceFactor_;
        targetReserves = targetReserves_;
        baseBorrowMin = baseBorrowMin_;
        borrowPerSecondInterestRate = borrowRate;
        supplyPerSecondInterestRate = supplyRate;
        for (uint8 i = 0; i < assets_.length; i++) {
            AssetInfo memory a = assets_[i];
            a.offset = i;
            assetList.push(a);
        }
        numAssets = uint8(assets_.length);
        totals.baseSupplyIndex = BASE_INDEX_SCALE;
        totals.baseBorrowIndex = BASE_INDEX_SCALE;
        totals.lastAccrualTime = uint40(block.timestamp);
    }

    // ---------------------------------------------------------------- views

    function totalsBasic() external view returns (TotalsBasic memory) {
        return totals;
    }

    function getAssetInfo(uint8 i) public view returns (AssetInfo memory) {
        if (i >= numAssets) revert BadAsset();
        return assetList[i];
    }

    function getAssetInfoByAddress(address asset) public view returns (AssetInfo memory) {
        for (uint8 i = 0; i < numAssets; i++) {
            if (assetList[i].asset == asset) return assetList[i];
        }
        revert BadAsset();
    }

    function getPrice(address priceFeed) public view returns (uint256) {
        (, int256 price,,,) = IPriceFeedLike(priceFeed).latestRoundData();
        if (price <= 0) revert BadPrice();
        return uint256(price);
    }

    function getNowInternal() internal view returns (uint40) {
        return uint40(block.timestamp);
    }

    function accruedInterestIndices(uint256 timeElapsed) internal view returns (uint64, uint64) {
        uint64 baseSupplyIndex_ = totals.baseSupplyIndex;
        uint64 baseBorrowIndex_ = totals.baseBorrowIndex;
        if (timeElapsed > 0) {
            baseSupplyIndex_ += safe64(mulFactor(baseSupplyIndex_, supplyPerSecondInterestRate * timeElapsed));
            baseBorrowIndex_ += safe64(mulFactor(baseBorrowIndex_, borrowPerSecondInterestRate * timeElapsed));
        }
        return (baseSupplyIndex_, baseBorrowIndex_);
    }

    function totalSupply() external view returns (uint256) {
        (uint64 s,) = accruedInterestIndices(getNowInternal() - totals.lastAccrualTime);
        return presentValueSupply(s, totals.totalSupplyBase);
    }

    function totalBorrow() external view returns (uint256) {
        (, uint64 b) = accruedInterestIndices(getNowInternal() - totals.lastAccrualTime);
        return presentValueBorrow(b, totals.totalBorrowBase);
    }

    function balanceOf(address account) external view returns (uint256) {
        (uint64 s,) = accruedInterestIndices(getNowInternal() - totals.lastAccrualTime);
        int104 principal = userBasic[account].principal;
        return principal > 0 ? presentValueSupply(s, unsigned104(principal)) : 0;
    }

    function borrowBalanceOf(address account) external view returns (uint256) {
        (, uint64 b) = accruedInterestIndices(getNowInternal() - totals.lastAccrualTime);
        int104 principal = userBasic[account].principal;
        return principal < 0 ? presentValueBorrow(b, unsigned104(-principal)) : 0;
    }

    function collateralBalanceOf(address account, address asset) external view returns (uint128) {
        return userCollateral[account][asset].balance;
    }

    function getReserves() public view returns (int256) {
        (uint64 s, uint64 b) = accruedInterestIndices(getNowInternal() - totals.lastAccrualTime);
        uint256 balance = IERC20Like(baseToken).balanceOf(address(this));
        uint256 totalSupply_ = presentValueSupply(s, totals.totalSupplyBase);
        uint256 totalBorrow_ = presentValueBorrow(b, totals.totalBorrowBase);
        return signed256(balance) - signed256(totalSupply_) + signed256(totalBorrow_);
    }

    function getCollateralReserves(address asset) public view returns (uint256) {
        return IERC20Like(asset).balanceOf(address(this)) - totalsCollateral[asset].totalSupplyAsset;
    }

    /// Comet.isBorrowCollateralized: borrow side, `borrowCollateralFactor`, stored indices.
    function isBorrowCollateralized(address account) public view returns (bool) {
        return collateralCovers(account, false);
    }

    /// Comet.isLiquidatable: `liquidateCollateralFactor`, stored (not accrued) indices.
    function isLiquidatable(address account) public view returns (bool) {
        return !collateralCovers(account, true);
    }

    /// The liquidity loop Comet's isBorrowCollateralized and isLiquidatable share: whether the account's
    /// collateral, each asset valued at its price times `liquidateCollateralFactor` (`forLiquidation`) or
    /// `borrowCollateralFactor`, covers its borrow at the stored indices. A supplier (principal >= 0) is covered;
    /// the loop stops once liquidity is >= 0, since collateral only adds to it.
    function collateralCovers(address account, bool forLiquidation) internal view returns (bool) {
        int104 principal = userBasic[account].principal;
        if (principal >= 0) return true;
        uint16 assetsIn = userBasic[account].assetsIn;
        int256 liquidity = signedMulPrice(presentValue(principal), getPrice(baseTokenPriceFeed), uint64(baseScale));
        for (uint8 i = 0; i < numAssets; i++) {
            if (isInAsset(assetsIn, i)) {
                if (liquidity >= 0) return true;
                AssetInfo memory asset = assetList[i];
                uint256 newAmount = mulPrice(userCollateral[account][asset.asset].balance, getPrice(asset.priceFeed), asset.scale);
                uint64 factor = forLiquidation ? asset.liquidateCollateralFactor : asset.borrowCollateralFactor;
                liquidity += signed256(mulFactor(newAmount, factor));
            }
        }
        return liquidity >= 0;
    }

    /// Comet.quoteCollateral: collateral bought for `baseAmount` at the store-front discount.
    function quoteCollateral(address asset, uint256 baseAmount) public view returns (uint256) {
        AssetInfo memory assetInfo = getAssetInfoByAddress(asset);
        uint256 assetPrice = getPrice(assetInfo.priceFeed);
        uint256 discountFactor = mulFactor(storeFrontPriceFactor, FACTOR_SCALE - assetInfo.liquidationFactor);
        uint256 assetPriceDiscounted = mulFactor(assetPrice, FACTOR_SCALE - discountFactor);
        uint256 basePrice = getPrice(baseTokenPriceFeed);
        return basePrice * baseAmount * assetInfo.scale / assetPriceDiscounted / baseScale;
    }

    // ---------------------------------------------------------------- actions

    function accrueAccount(address) external {
        accrueInternal();
    }

    function supply(address asset, uint256 amount) external {
        supplyInternal(msg.sender, msg.sender, asset, amount);
    }

    function supplyTo(address dst, address asset, uint256 amount) external {
        supplyInternal(msg.sender, dst, asset, amount);
    }

    function withdraw(address asset, uint256 amount) external {
        withdrawInternal(msg.sender, msg.sender, asset, amount);
    }

    function withdrawTo(address to, address asset, uint256 amount) external {
        withdrawInternal(msg.sender, to, asset, amount);
    }

    function supplyInternal(address from, address dst, address asset, uint256 amount) internal {
        if (asset == baseToken) {
            accrueInternal();
            doTransferIn(asset, from, amount);
            UserBasic memory dstUser = userBasic[dst];
            int104 dstPrincipal = dstUser.principal;
            int256 dstBalance = presentValue(dstPrincipal) + signed256(amount);
            int104 dstPrincipalNew = principalValue(dstBalance);
            (uint104 repayAmount, uint104 supplyAmount) = repayAndSupplyAmount(dstPrincipal, dstPrincipalNew);
            totals.totalSupplyBase += supplyAmount;
            totals.totalBorrowBase -= repayAmount;
            userBasic[dst].principal = dstPrincipalNew;
            emit Supply(from, dst, amount);
            if (supplyAmount > 0) emit Transfer(address(0), dst, presentValueSupply(totals.baseSupplyIndex, supplyAmount));
        } else {
            AssetInfo memory assetInfo = getAssetInfoByAddress(asset);
            doTransferIn(asset, from, amount);
            totalsCollateral[asset].totalSupplyAsset += safe128(amount);
            uint128 dstCollateral = userCollateral[dst][asset].balance;
            uint128 dstCollateralNew = dstCollateral + safe128(amount);
            userCollateral[dst][asset].balance = dstCollateralNew;
            updateAssetsIn(dst, assetInfo, dstCollateral, dstCollateralNew);
            emit SupplyCollateral(from, dst, asset, amount);
        }
    }

    function withdrawInternal(address src, address to, address asset, uint256 amount) internal {
        if (asset == baseToken) {
            accrueInternal();
            UserBasic memory srcUser = userBasic[src];
            int104 srcPrincipal = srcUser.principal;
            int256 srcBalance = presentValue(srcPrincipal) - signed256(amount);
            int104 srcPrincipalNew = principalValue(srcBalance);
            (uint104 withdrawAmount, uint104 borrowAmount) = withdrawAndBorrowAmount(srcPrincipal, srcPrincipalNew);
            totals.totalSupplyBase -= withdrawAmount;
            totals.totalBorrowBase += borrowAmount;
            userBasic[src].principal = srcPrincipalNew;
            if (srcBalance < 0) {
                if (uint256(-srcBalance) < baseBorrowMin) revert BorrowTooSmall();
                if (!isBorrowCollateralized(src)) revert NotCollateralized();
            }
            doTransferOut(asset, to, amount);
            emit Withdraw(src, to, amount);
            if (withdrawAmount > 0) emit Transfer(src, address(0), presentValueSupply(totals.baseSupplyIndex, withdrawAmount));
        } else {
            AssetInfo memory assetInfo = getAssetInfoByAddress(asset);
            uint128 srcCollateral = userCollateral[src][asset].balance;
            uint128 srcCollateralNew = srcCollateral - safe128(amount);
            totalsCollateral[asset].totalSupplyAsset -= safe128(amount);
            userCollateral[src][asset].balance = srcCollateralNew;
            updateAssetsIn(src, assetInfo, srcCollateral, srcCollateralNew);
            if (!isBorrowCollateralized(src)) revert NotCollateralized();
            doTransferOut(asset, to, amount);
            emit WithdrawCollateral(src, to, asset, amount);
        }
    }

    /// Comet.absorb: takes over the whole position of each liquidatable account.
    function absorb(address absorber, address[] calldata accounts) external {
        accrueInternal();
        for (uint256 i = 0; i < accounts.length; i++) {
            absorbInternal(absorber, accounts[i]);
        }
    }

    function absorbInternal(address absorber, address account) internal {
        if (!isLiquidatable(account)) revert NotLiquidatable();
        UserBasic memory accountUser = userBasic[account];
        int104 oldPrincipal = accountUser.principal;
        int256 oldBalance = presentValue(oldPrincipal);
        uint16 assetsIn = accountUser.assetsIn;
        uint256 basePrice = getPrice(baseTokenPriceFeed);
        uint256 deltaValue = 0;
        for (uint8 i = 0; i < numAssets; i++) {
            if (isInAsset(assetsIn, i)) {
                AssetInfo memory assetInfo = assetList[i];
                address asset = assetInfo.asset;
                uint128 seizeAmount = userCollateral[account][asset].balance;
                userCollateral[account][asset].balance = 0;
                totalsCollateral[asset].totalSupplyAsset -= seizeAmount;
                uint256 value = mulPrice(seizeAmount, getPrice(assetInfo.priceFeed), assetInfo.scale);
                deltaValue += mulFactor(value, assetInfo.liquidationFactor);
                emit AbsorbCollateral(absorber, account, asset, seizeAmount, value);
            }
        }
        uint256 deltaBalance = divPrice(deltaValue, basePrice, uint64(baseScale));
        int256 newBalance = oldBalance + signed256(deltaBalance);
        if (newBalance < 0) newBalance = 0;
        int104 newPrincipal = principalValue(newBalance);
        userBasic[account].principal = newPrincipal;
        userBasic[account].assetsIn = 0;
        (uint104 repayAmount, uint104 supplyAmount) = repayAndSupplyAmount(oldPrincipal, newPrincipal);
        totals.totalSupplyBase += supplyAmount;
        totals.totalBorrowBase -= repayAmount;
        uint256 basePaidOut = unsigned256(newBalance - oldBalance);
        uint256 valueOfBasePaidOut = mulPrice(basePaidOut, basePrice, uint64(baseScale));
        emit AbsorbDebt(absorber, account, basePaidOut, valueOfBasePaidOut);
        if (newPrincipal > 0) emit Transfer(address(0), account, presentValueSupply(totals.baseSupplyIndex, unsigned104(newPrincipal)));
    }

    /// Comet.buyCollateral: buys absorbed collateral at the store-front price while reserves < targetReserves.
    function buyCollateral(address asset, uint256 minAmount, uint256 baseAmount, address recipient) external {
        int256 reserves = getReserves();
        if (reserves >= 0 && uint256(reserves) >= targetReserves) revert NotForSale();
        doTransferIn(baseToken, msg.sender, baseAmount);
        uint256 collateralAmount = quoteCollateral(asset, baseAmount);
        if (collateralAmount < minAmount) revert TooMuchSlippage();
        if (collateralAmount > getCollateralReserves(asset)) revert InsufficientReserves();
        doTransferOut(asset, recipient, safe128(collateralAmount));
        emit BuyCollateral(msg.sender, asset, baseAmount, collateralAmount);
    }

    // ---------------------------------------------------------------- internals (CometCore/CometMath)

    function accrueInternal() internal {
        uint40 now_ = getNowInternal();
        uint256 timeElapsed = uint256(now_ - totals.lastAccrualTime);
        if (timeElapsed > 0) {
            (totals.baseSupplyIndex, totals.baseBorrowIndex) = accruedInterestIndices(timeElapsed);
            totals.lastAccrualTime = now_;
        }
    }

    function updateAssetsIn(address account, AssetInfo memory assetInfo, uint128 initialUserBalance, uint128 finalUserBalance)
        internal
    {
        if (initialUserBalance == 0 && finalUserBalance != 0) {
            userBasic[account].assetsIn |= (uint16(1) << assetInfo.offset);
        } else if (initialUserBalance != 0 && finalUserBalance == 0) {
            userBasic[account].assetsIn &= ~(uint16(1) << assetInfo.offset);
        }
    }

    function isInAsset(uint16 assetsIn, uint8 assetOffset) internal pure returns (bool) {
        return (assetsIn & (uint16(1) << assetOffset) != 0);
    }

    function presentValue(int104 principalValue_) internal view returns (int256) {
        if (principalValue_ >= 0) {
            return signed256(presentValueSupply(totals.baseSupplyIndex, uint104(principalValue_)));
        } else {
            return -signed256(presentValueBorrow(totals.baseBorrowIndex, uint104(-principalValue_)));
        }
    }

    function presentValueSupply(uint64 baseSupplyIndex_, uint104 principalValue_) internal pure returns (uint256) {
        return uint256(principalValue_) * baseSupplyIndex_ / BASE_INDEX_SCALE;
    }

    function presentValueBorrow(uint64 baseBorrowIndex_, uint104 principalValue_) internal pure returns (uint256) {
        return uint256(principalValue_) * baseBorrowIndex_ / BASE_INDEX_SCALE;
    }

    function principalValue(int256 presentValue_) internal view returns (int104) {
        if (presentValue_ >= 0) {
            return signed104(principalValueSupply(totals.baseSupplyIndex, uint256(presentValue_)));
        } else {
            return -signed104(principalValueBorrow(totals.baseBorrowIndex, uint256(-presentValue_)));
        }
    }

    function principalValueSupply(uint64 baseSupplyIndex_, uint256 presentValue_) internal pure returns (uint104) {
        return safe104((presentValue_ * BASE_INDEX_SCALE) / baseSupplyIndex_);
    }

    function principalValueBorrow(uint64 baseBorrowIndex_, uint256 presentValue_) internal pure returns (uint104) {
        return safe104((presentValue_ * BASE_INDEX_SCALE + baseBorrowIndex_ - 1) / baseBorrowIndex_);
    }

    function repayAndSupplyAmount(int104 oldPrincipal, int104 newPrincipal) internal pure returns (uint104, uint104) {
        if (newPrincipal < oldPrincipal) return (0, 0);
        if (newPrincipal <= 0) {
            return (uint104(newPrincipal - oldPrincipal), 0);
        } else if (oldPrincipal >= 0) {
            return (0, uint104(newPrincipal - oldPrincipal));
        } else {
            return (uint104(-oldPrincipal), uint104(newPrincipal));
        }
    }

    function withdrawAndBorrowAmount(int104 oldPrincipal, int104 newPrincipal) internal pure returns (uint104, uint104) {
        if (newPrincipal > oldPrincipal) return (0, 0);
        if (newPrincipal >= 0) {
            return (uint104(oldPrincipal - newPrincipal), 0);
        } else if (oldPrincipal <= 0) {
            return (0, uint104(oldPrincipal - newPrincipal));
        } else {
            return (uint104(oldPrincipal), uint104(-newPrincipal));
        }
    }

    function mulFactor(uint256 n, uint256 factor) internal pure returns (uint256) {
        return n * factor / FACTOR_SCALE;
    }

    function mulPrice(uint256 n, uint256 price, uint64 fromScale) internal pure returns (uint256) {
        return n * price / fromScale;
    }

    function signedMulPrice(int256 n, uint256 price, uint64 fromScale) internal pure returns (int256) {
        return n * signed256(price) / int256(uint256(fromScale));
    }

    function divPrice(uint256 n, uint256 price, uint64 toScale) internal pure returns (uint256) {
        return n * toScale / price;
    }

    function doTransferIn(address asset, address from, uint256 amount) internal {
        require(IERC20Like(asset).transferFrom(from, address(this), amount), "DevComet: transferFrom");
    }

    function doTransferOut(address asset, address to, uint256 amount) internal {
        require(IERC20Like(asset).transfer(to, amount), "DevComet: transfer");
    }

    function safe64(uint256 n) internal pure returns (uint64) {
        if (n > type(uint64).max) revert Absurd();
        return uint64(n);
    }

    function safe104(uint256 n) internal pure returns (uint104) {
        if (n > type(uint104).max) revert Absurd();
        return uint104(n);
    }

    function safe128(uint256 n) internal pure returns (uint128) {
        if (n > type(uint128).max) revert Absurd();
        return uint128(n);
    }

    function signed104(uint104 n) internal pure returns (int104) {
        if (n > uint104(type(int104).max)) revert Absurd();
        return int104(n);
    }

    function signed256(uint256 n) internal pure returns (int256) {
        if (n > uint256(type(int256).max)) revert Absurd();
        return int256(n);
    }

    function unsigned104(int104 n) internal pure returns (uint104) {
        if (n < 0) revert Absurd();
        return uint104(n);
    }

    function unsigned256(int256 n) internal pure returns (uint256) {
        if (n < 0) revert Absurd();
        return uint256(n);
    }
}
