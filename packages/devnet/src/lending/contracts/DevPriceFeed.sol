// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

/// @title DevPriceFeed
/// @notice A Chainlink-style USD price feed (8 decimals) whose answer the owner sets. It speaks both
/// the legacy `latestAnswer()` (read by AaveOracle) and AggregatorV3 `latestRoundData()` (read by Comet
/// and by DevMorphoOracle), and emits Chainlink's `AnswerUpdated` on every change.
contract DevPriceFeed {
    uint8 public constant decimals = 8;
    string public description;
    address public immutable owner;
    int256 public latestAnswer;
    uint256 public latestTimestamp;
    uint256 public latestRound;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    constructor(string memory description_, int256 initialAnswer) {
        owner = msg.sender;
        description = description_;
        _set(initialAnswer);
    }

    function setAnswer(int256 answer) external {
        require(msg.sender == owner, "DevPriceFeed: owner");
        _set(answer);
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (uint80(latestRound), latestAnswer, latestTimestamp, latestTimestamp, uint80(latestRound));
    }

    function _set(int256 answer) internal {
        latestRound += 1;
        latestAnswer = answer;
        latestTimestamp = block.timestamp;
        emit AnswerUpdated(answer, latestRound, block.timestamp);
    }
}
