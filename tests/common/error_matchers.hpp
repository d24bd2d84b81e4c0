#pragma once
/// @file
/// Assertions that a statement throws a given spillway error type whose
/// message contains a given text.

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

/// Expects the expression `statement` to throw `Type` (or a subclass) whose `what()`
/// contains `text`.
#define EXPECT_THROW_WITH(statement, Type, text)                                      \
    EXPECT_THROW(                                                                     \
        {                                                                             \
            try {                                                                     \
                static_cast<void>(statement);                                         \
            } catch (Type const& spillway_test_error_) {                              \
                EXPECT_THAT(std::string(spillway_test_error_.what()),                 \
                            ::testing::HasSubstr(text));                              \
                throw;                                                                \
            }                                                                         \
        },                                                                            \
        Type)
