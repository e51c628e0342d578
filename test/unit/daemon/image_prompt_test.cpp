// Images in prompts, end to end: initialize says agentd takes them; an image block (and a link to an
// image in the workspace) reaches the model as the provider's image block, typed by its bytes; the
// session keeps it (stored once as a blob, named by hash in the history and the log), sends it again
// on later calls, and a new agentd replays it and sends it again after session/load. What is not an
// image is refused before a turn starts.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/support/base64.h"
#include "core/support/json.h"
#include "storage/sqlite.h"
#include "test/support/session_fixture.h"
#include "test/support/test_images.h"

namespace agentd {
namespace {

using support::Json;
using testing::request;

Json image_block(const std::string& bytes, std::string_view declared) {
  Json block = Json::object();
  block["type"] = "image";
  block["data"] = support::base64_encode(bytes);
  block["mimeType"] = std::string(declared);
  return block;
}

Json text_block(std::string_view text) {
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = std::string(text);
  return block;
}

Json prompt_params(const std::string& session, std::vector<Json> blocks) {
  Json params = Json::object();
  params["sessionId"] = session;
  Json list = Json::array();
  for (auto& b : blocks) list.push_back(std::move(b));
  params["prompt"] = std::move(list);
  return params;
}

// The image blocks of a user message in an Anthropic request body.
std::vector<Json> anthropic_images(const Json& body) {
  std::vector<Json> out;
  for (const Json& message : body["messages"].as_array()) {
    if (message["role"] != Json("user") || !message["content"].is_array()) continue;
    for (const Json& block : message["content"].as_array()) {
      if (block["type"] == Json("image")) out.push_back(block);
    }
  }
  return out;
}

TEST(ImagePrompt, TheModelSeesTheImageAndTheSessionKeepsIt) {
  // Large enough to be a blob file of its own (storage/blob_files.h), not a row.
  std::string shot = testing::png_image(800, 600);
  shot.resize(std::size_t{100} << 10, 'x');
  const std::string diagram = testing::jpeg_image(320, 200);
  testing::SessionFixture f(
      testing::text_reply("first", "A stack trace in a dialog.") + "," +
          testing::text_reply("second", "Still the same screenshot.") + "," +
          testing::text_reply("third", "I remember both."),
      [&](const std::filesystem::path& work) { std::ofstream(work / "diagram.jpg", std::ios::binary) << diagram; });
  Json init = request(*f.agentd, 5, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  EXPECT_EQ(init["result"]["agentCapabilities"]["promptCapabilities"]["image"], Json(true)) << init.dump();

  // Declared as JPEG, the bytes are PNG: the model is told PNG. The workspace file comes by link.
  Json link = Json::object();
  link["type"] = "resource_link";
  link["name"] = "diagram.jpg";
  link["uri"] = "file://" + f.dir.file("work") + "/diagram.jpg";
  Json answer = request(
      *f.agentd, 20, "session/prompt",
      prompt_params(f.session, {image_block(shot, "image/jpeg"), link, text_block("what does this error dialog say?")})
          .dump());
  ASSERT_EQ(answer["result"]["stopReason"], Json("end_turn")) << answer.dump();
  auto first = f.mock->requests()[0]["body"];
  auto images = anthropic_images(first);
  ASSERT_EQ(images.size(), 2U) << first.dump();
  EXPECT_EQ(images[0]["source"]["media_type"], Json("image/png"));
  EXPECT_EQ(images[0]["source"]["data"], Json(support::base64_encode(shot)));
  EXPECT_EQ(images[1]["source"]["media_type"], Json("image/jpeg"));
  EXPECT_EQ(images[1]["source"]["data"], Json(support::base64_encode(diagram)));

  // The next prompt sends them again with the history.
  f.prompt("and now?");
  EXPECT_EQ(anthropic_images(f.mock->requests()[1]["body"]).size(), 2U);

  // The large one is a file next to the database.
  std::size_t blob_files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(f.dir.file("agentd.db.blobs"))) {
    blob_files += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(blob_files, 1U);
  // The replay shows the image itself.
  auto events = f.call("_agentd/events/replay", Json::object());
  ASSERT_TRUE(events.contains("result")) << events.dump();
  EXPECT_NE(events.dump().find(support::base64_encode(shot)), std::string::npos);

  // A new agentd on the same database: load replays the images as the user's chunks, and the next
  // call sends them again.
  f.agentd.reset();
  {
    // Stored by hash: the messages and the log never carry the bytes.
    auto db = storage::Connection::open(f.dir.file("agentd.db"));
    ASSERT_TRUE(db) << db.error().message();
    const std::string needle = support::base64_encode(shot).substr(0, 64);
    for (std::string_view table : {"messages WHERE instr(content", "events WHERE instr(payload"}) {
      EXPECT_EQ(*db->query_int(fmt::format("SELECT count(*) FROM {}, '{}') > 0", table, needle)), 0) << table;
    }
    EXPECT_EQ(*db->query_int("SELECT count(*) FROM session_blobs"), 2);
    EXPECT_EQ(*db->query_int("SELECT count(*) FROM events WHERE kind = 'user_image'"), 2);
  }
  f.agentd = testing::start_in_process_with_mock(f.dir, f.mock->url());
  request(*f.agentd, 0, "initialize", R"({"protocolVersion":1,"clientCapabilities":{}})");
  std::vector<Json> replayed;
  Json loaded = request(
      *f.agentd, 1, "session/load",
      R"({"sessionId":")" + f.session + R"(","cwd":")" + f.dir.file("work") + R"(","mcpServers":[]})",
      [&](const Json& m) {
        const Json& update = m["params"]["update"];
        if (update["sessionUpdate"] == Json("user_message_chunk") && update["content"]["type"] == Json("image")) {
          replayed.push_back(update["content"]);
        }
      });
  ASSERT_TRUE(loaded.contains("result")) << loaded.dump();
  ASSERT_EQ(replayed.size(), 2U);
  EXPECT_EQ(replayed[0]["mimeType"], Json("image/png"));
  EXPECT_EQ(replayed[0]["data"], Json(support::base64_encode(shot)));
  EXPECT_EQ(replayed[1]["mimeType"], Json("image/jpeg"));
  f.prompt("do you still see them?");
  auto third = anthropic_images(f.mock->requests()[2]["body"]);
  ASSERT_EQ(third.size(), 2U);
  EXPECT_EQ(third[0]["source"]["data"], Json(support::base64_encode(shot)));
}

TEST(ImagePrompt, WhatIsNotAnImageIsRefusedBeforeTheTurn) {
  testing::SessionFixture f(testing::text_reply("only", "fine"), [](const std::filesystem::path& work) {
    std::filesystem::create_directories(work / ".ssh");
    std::ofstream(work / ".ssh" / "key.png", std::ios::binary) << testing::png_image(2, 2);
  });
  // A shell script sent as a PNG.
  Json script = request(
      *f.agentd, 20, "session/prompt",
      prompt_params(f.session, {image_block("#!/bin/sh\nrm -rf ~\n", "image/png"), text_block("run this")}).dump());
  ASSERT_TRUE(script.contains("error")) << script.dump();
  EXPECT_EQ(script["error"]["code"], Json(-32602)) << script.dump();
  EXPECT_NE(script["error"]["message"].as_string().find("not a PNG, JPEG, GIF or WebP"), std::string::npos)
      << script.dump();
  // A link to a secret with an image's name.
  Json link = Json::object();
  link["type"] = "resource_link";
  link["name"] = "key.png";
  link["uri"] = "file://" + f.dir.file("work") + "/.ssh/key.png";
  Json secret = request(*f.agentd, 21, "session/prompt", prompt_params(f.session, {link, text_block("look")}).dump());
  ASSERT_TRUE(secret.contains("error")) << secret.dump();
  EXPECT_NE(secret["error"]["message"].as_string().find("SSH"), std::string::npos) << secret.dump();
  // Audio is still refused by name.
  Json audio = Json::object();
  audio["type"] = "audio";
  audio["data"] = "AAAA";
  audio["mimeType"] = "audio/wav";
  Json refused = request(*f.agentd, 22, "session/prompt", prompt_params(f.session, {audio}).dump());
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  // None of them reached the model or started a turn; the session still works.
  EXPECT_EQ(f.mock->requests().size(), 0U);
  Json ok = f.prompt("hello");
  EXPECT_EQ(ok["result"]["stopReason"], Json("end_turn")) << ok.dump();
}

}  // namespace
}  // namespace agentd
