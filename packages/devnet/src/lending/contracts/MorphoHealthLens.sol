// SPDX-License-Identifier: GPL-2.0-or-later
pragma solidity 0.8.19;

import {Id, IMorpho, MarketParams, Position} from "morpho-blue/src/interfaces/IMorpho.sol";
import {IOracle} from "morpho-blue/src/interfaces/IOracle.sol";
import {MathLib} from "morpho-blue/src/libraries/MathLib.sol";
import {SharesMathLib} from "morpho-blue/src/libraries/SharesMathLib.sol";
import {MarketParamsLib} from "morpho-blue/src/libraries/MarketParamsLib.sol";
import {ORACLE_PRICE_SCALE} from "morpho-blue/src/libraries/ConstantsLib.sol";
import {MorphoBalancesLib} from "morpho-blue/src/libraries/periphery/MorphoBalancesLib.sol";

/// @title MorphoHealthLens
/// @notice Test helper: Morpho Blue's own health check (`Morpho._isHealthy`) evaluated with the
/// market's interest accrued to `block.timestamp` (`MorphoBalancesLib.expectedMarketBalances`, as
/// `liquidate` does before checking). Returns the two sides of `maxBorrow >= borrowed`.
contract MorphoHealthLens {
    using MathLib for uint256;
    using SharesMathLib for uint256;
    using MarketParamsLib for MarketParams;
    using MorphoBalancesLib for IMorpho;

    function health(IMorpho morpho, MarketParams memory marketParams, address borrower)
        external
        view
        returns (uint256 borrowed, uint256 maxBorrow, bool healthy)
    {
        Id id = marketParams.id();
        Position memory p = morpho.position(id, borrower);
        (,, uint256 totalBorrowAssets, uint256 totalBorrowShares) = morpho.expectedMarketBalances(marketParams);
        uint256 collateralPrice = IOracle(marketParams.oracle).price();
        borrowed = uint256(p.borrowShares).toAssetsUp(totalBorrowAssets, totalBorrowShares);
        maxBorrow = uint256(p.collateral).mulDivDown(collateralPrice, ORACLE_PRICE_SCALE).wMulDown(marketParams.lltv);
        healthy = p.borrowShares == 0 || maxBorrow >= borrowed;
    }
}
