// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

interface IDevFeed {
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
    function decimals() external view returns (uint8);
}

/// @title DevMorphoOracle
/// @notice Morpho Blue `IOracle`: the price of 1 unit of collateral token quoted in loan token units,
/// scaled by 1e36, composed from two USD feeds exactly as Morpho's ChainlinkOracle does:
/// `price = SCALE_FACTOR * collateralUsd / loanUsd` with
/// `SCALE_FACTOR = 10 ** (36 + loanDecimals + loanFeedDecimals - collateralDecimals - collateralFeedDecimals)`.
contract DevMorphoOracle {
    IDevFeed public immutable collateralFeed;
    IDevFeed public immutable loanFeed;
    uint256 public immutable SCALE_FACTOR;

    constructor(IDevFeed collateralFeed_, uint8 collateralDecimals, IDevFeed loanFeed_, uint8 loanDecimals) {
        collateralFeed = collateralFeed_;
        loanFeed = loanFeed_;
        SCALE_FACTOR = 10 ** (36 + uint256(loanDecimals) + loanFeed_.decimals() - collateralDecimals - collateralFeed_.decimals());
    }

    function price() external view returns (uint256) {
        (, int256 c,,,) = collateralFeed.latestRoundData();
        (, int256 l,,,) = loanFeed.latestRoundData();
        require(c > 0 && l > 0, "DevMorphoOracle: bad price");
        return SCALE_FACTOR * uint256(c) / uint256(l);
    }
}
