#include "core/context/stack_parser.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace agentd::core::context {
namespace {

struct Expected {
  std::string path;
  std::size_t line;
  std::size_t column;
  StackFormat format;
  std::size_t depth;
  std::string function;
};

struct Case {
  const char* name;
  std::string input;
  std::vector<Expected> frames;
};

class StackParserTable : public ::testing::TestWithParam<Case> {};

TEST_P(StackParserTable, ParsesEveryFrame) {
  const Case& c = GetParam();
  const auto frames = parse_stack_frames(c.input);
  ASSERT_EQ(frames.size(), c.frames.size()) << c.input;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(frames[i].path, c.frames[i].path);
    EXPECT_EQ(frames[i].line, c.frames[i].line);
    EXPECT_EQ(frames[i].column, c.frames[i].column);
    EXPECT_EQ(stack_format_name(frames[i].format), stack_format_name(c.frames[i].format));
    EXPECT_EQ(frames[i].depth, c.frames[i].depth);
    EXPECT_EQ(frames[i].function, c.frames[i].function);
  }
}

const std::vector<Case> kCases = {
    {"compiler_error",
     "src/parser.cpp:21:27: error: invalid operands to binary expression\n",
     {{"src/parser.cpp", 21, 27, StackFormat::compiler, 0, ""}}},
    {"compiler_note_is_deeper",
     "src/a.h:3:1: error: redefinition of 'x'\nsrc/b.h:7: note: previous definition is here\n",
     {{"src/a.h", 3, 1, StackFormat::compiler, 0, ""}, {"src/b.h", 7, 0, StackFormat::compiler, 2, ""}}},
    {"asan",
     "==4242==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n"
     "    #0 0x55d5c1 in ini::(anonymous namespace)::parse_header_line(char const*, std::string&, std::string&) "
     "/home/ci/work/ini_tool/src/parser.cpp:21:27\n"
     "    #1 0x55d5c2 in ini::parse_document(std::string const&) /home/ci/work/ini_tool/src/parser.cpp:40:5\n"
     "    #2 0x7f1234 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x2409a)\n",
     {{"/home/ci/work/ini_tool/src/parser.cpp", 21, 27, StackFormat::sanitizer, 0,
       "ini::(anonymous namespace)::parse_header_line(char const*, std::string&, std::string&)"},
      {"/home/ci/work/ini_tool/src/parser.cpp", 40, 5, StackFormat::sanitizer, 1,
       "ini::parse_document(std::string const&)"}}},
    {"gdb",
     "#0  parse_header_line (line=0x0, key=..., value=...) at src/parser.cpp:21\n"
     "#1  0x0000555555555189 in ini::parse_document (text=...) at src/parser.cpp:40\n",
     {{"src/parser.cpp", 21, 0, StackFormat::gdb, 0, "parse_header_line"},
      {"src/parser.cpp", 40, 0, StackFormat::gdb, 1, "ini::parse_document"}}},
    {"valgrind",
     "==123== Invalid read of size 1\n==123==    at 0x4005F4: parse_header_line (parser.cpp:21)\n"
     "==123==    by 0x400702: main (main.cpp:15)\n",
     {{"parser.cpp", 21, 0, StackFormat::valgrind, 0, "parse_header_line"},
      {"main.cpp", 15, 0, StackFormat::valgrind, 1, "main"}}},
    {"python_most_recent_call_last",
     "Traceback (most recent call last):\n"
     "  File \"/home/ci/billing/tests/test_billing.py\", line 12, in test_unknown_discount_code_is_ignored\n"
     "    assert compute_total(invoice) == 1000\n"
     "  File \"/home/ci/billing/app/billing.py\", line 22, in compute_total\n"
     "    percent = discount_percent(invoice.discount_code)\n"
     "  File \"/home/ci/billing/app/billing.py\", line 14, in discount_percent\n"
     "    return DISCOUNTS[code.upper()]\n"
     "KeyError: 'SPRING'\n",
     {{"/home/ci/billing/tests/test_billing.py", 12, 0, StackFormat::python, 2,
       "test_unknown_discount_code_is_ignored"},
      {"/home/ci/billing/app/billing.py", 22, 0, StackFormat::python, 1, "compute_total"},
      {"/home/ci/billing/app/billing.py", 14, 0, StackFormat::python, 0, "discount_percent"}}},
    {"node",
     "TypeError: Cannot read properties of undefined (reading 'cents')\n"
     "    at /srv/shop/src/cart.js:20:63\n"
     "    at Array.reduce (<anonymous>)\n"
     "    at Cart.totalCents (/srv/shop/src/cart.js:20:23)\n"
     "    at TestContext.<anonymous> (/srv/shop/test/cart.test.js:14:27)\n"
     "    at node:internal/test_runner/test:583:25\n",
     {{"/srv/shop/src/cart.js", 20, 63, StackFormat::node, 0, ""},
      {"/srv/shop/src/cart.js", 20, 23, StackFormat::node, 1, "Cart.totalCents"},
      {"/srv/shop/test/cart.test.js", 14, 27, StackFormat::node, 2, "TestContext.<anonymous>"}}},
    {"java",
     "java.lang.NullPointerException: Cannot invoke \"com.acme.orders.Order.customerEmail()\"\n"
     "\tat com.acme.orders.OrderService.confirmationFor(OrderService.java:18)\n"
     "\tat com.acme.orders.OrderServiceTest.lambda$confirmationForUnknownOrder$0(OrderServiceTest.java:13)\n"
     "\tat org.junit.jupiter.api.AssertThrows.assertThrows(AssertThrows.java:53)\n",
     {{"OrderService.java", 18, 0, StackFormat::java, 0, "com.acme.orders.OrderService.confirmationFor"},
      {"OrderServiceTest.java", 13, 0, StackFormat::java, 1,
       "com.acme.orders.OrderServiceTest.lambda$confirmationForUnknownOrder$0"},
      {"AssertThrows.java", 53, 0, StackFormat::java, 2, "org.junit.jupiter.api.AssertThrows.assertThrows"}}},
    {"go_panic",
     "panic: runtime error: index out of range [0] with length 0\n\ngoroutine 1 [running]:\n"
     "example.com/deployctl/internal/config.(*Config).Primary(...)\n"
     "\t/home/ci/deployctl/internal/config/config.go:33\n"
     "main.main()\n"
     "\t/home/ci/deployctl/main.go:16 +0x1d\n"
     "exit status 2\n",
     {{"/home/ci/deployctl/internal/config/config.go", 33, 0, StackFormat::go, 0,
       "example.com/deployctl/internal/config.(*Config).Primary"},
      {"/home/ci/deployctl/main.go", 16, 0, StackFormat::go, 1, "main.main"}}},
    {"rust_compiler",
     "error[E0308]: mismatched types\n  --> src/tokenizer.rs:22:22\n",
     {{"src/tokenizer.rs", 22, 22, StackFormat::rust, 0, ""}}},
    {"rust_panic_new",
     "thread 'main' panicked at src/tokenizer.rs:22:22:\nunexpected character 'x'\n",
     {{"src/tokenizer.rs", 22, 22, StackFormat::rust, 0, ""}}},
    {"rust_panic_old",
     "thread 'tests::rejects_letters' panicked at 'unexpected character', src/tokenizer.rs:22:22\n",
     {{"src/tokenizer.rs", 22, 22, StackFormat::rust, 0, ""}}},
    {"rust_backtrace",
     "stack backtrace:\n   0: calc::tokenizer::tokenize\n             at ./src/tokenizer.rs:22:22\n"
     "   1: calc::evaluate\n             at ./src/lib.rs:8:18\n",
     {{"./src/tokenizer.rs", 22, 22, StackFormat::rust, 0, ""}, {"./src/lib.rs", 8, 18, StackFormat::rust, 1, ""}}},
    {"kernel_decoded",
     "Call Trace:\n ext4_fill_super (fs/ext4/super.c:5012)\n mount_bdev (fs/super.c:1401)\n",
     {{"fs/ext4/super.c", 5012, 0, StackFormat::generic, 0, ""}, {"fs/super.c", 1401, 0, StackFormat::generic, 1, ""}}},
    {"go_test_failure",
     "--- FAIL: TestPrimaryWithoutTargets (0.00s)\n    config_test.go:8: Primary() = {}\n",
     {{"config_test.go", 8, 0, StackFormat::generic, 0, ""}}},
    {"not_frames",
     "started at 12:30:05 on localhost:8080\nsee http://example.com/app.js:12 for details\nversion 1.2.3:4\n",
     {}},
};

INSTANTIATE_TEST_SUITE_P(Formats, StackParserTable, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(StackParser, JavaFramesCarryThePackagePath) {
  const auto frames = parse_stack_frames("\tat com.acme.orders.OrderService.confirmationFor(OrderService.java:18)\n");
  ASSERT_EQ(frames.size(), 1U);
  EXPECT_EQ(frames[0].package_path, "com/acme/orders/OrderService.java");
}

TEST(StackParser, SeparateTracesAreNumberedApart) {
  const auto frames = parse_stack_frames(
      "  File \"a.py\", line 1, in f\n  File \"b.py\", line 2, in g\n\n\n\nlater:\n"
      "    at run (/x/y.js:3:4)\n");
  ASSERT_EQ(frames.size(), 3U);
  EXPECT_EQ(frames[0].trace, 0U);
  EXPECT_EQ(frames[1].trace, 0U);
  EXPECT_EQ(frames[2].trace, 1U);
  EXPECT_EQ(frames[2].depth, 0U);
  EXPECT_EQ(frames[2].input_line, 7U);
}

TEST(StackParser, LongLinesAreNotParsed) {
  std::string input(10000, 'x');
  input += " src/a.cpp:1:1: error: x\n";
  EXPECT_TRUE(parse_stack_frames(input).empty());
}

}  // namespace
}  // namespace agentd::core::context
