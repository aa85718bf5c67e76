// Turning text into the one YAML document of a configuration file, safely:
// the text is first parsed into events only, counting nesting, so deeply
// nested input is refused before any node is built, and every yaml-cpp
// exception becomes a diagnostic with its position.
#include <yaml-cpp/eventhandler.h>

#include <sstream>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"

namespace orc::recipe::detail {

namespace {

struct TooDeep {
  YAML::Mark mark;
};

// Counts collection depth and documents from parser events. yaml-cpp's parser
// recurses once per level (its own guard stops at 2000, far past what the
// stack of an instrumented build tolerates), so stopping at k_max_nesting here
// keeps both the parser and the node builder shallow.
class Prescan final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++m_documents == 2) m_second_document = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    enter(mark);
  }
  void OnSequenceEnd() override { --m_depth; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    enter(mark);
  }
  void OnMapEnd() override { --m_depth; }

  int documents() const { return m_documents; }
  const YAML::Mark& second_document() const { return m_second_document; }

 private:
  void enter(const YAML::Mark& mark) {
    if (++m_depth > k_max_nesting) throw TooDeep{mark};
  }

  int m_depth = 0;
  int m_documents = 0;
  YAML::Mark m_second_document;
};

}  // namespace

std::expected<YAML::Node, DocumentError> parse_document(std::string_view text_view) {
  const std::string text(text_view);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    Prescan prescan;
    while (parser.HandleNextDocument(prescan)) {
      if (prescan.documents() > 1)
        return std::unexpected(
            DocumentError{.mark = prescan.second_document(),
                          .message = "a configuration file holds one YAML document; found a second one"});
    }
    if (prescan.documents() == 0) return YAML::Node(YAML::NodeType::Null);
    return YAML::Load(text);
  } catch (const TooDeep& e) {
    return std::unexpected(
        DocumentError{.mark = e.mark, .message = "nesting deeper than " + std::to_string(k_max_nesting) + " levels"});
  } catch (const YAML::Exception& e) {
    return std::unexpected(DocumentError{.mark = e.mark, .message = "YAML syntax error", .detail = e.msg});
  }
}

std::string DocumentError::full() const { return detail.empty() ? message : message + ": " + detail; }

std::string DocumentError::without_input() const {
  // yaml-cpp's messages are fixed sentences, a few followed by ": " and the
  // offending input ("unknown escape character: q").
  return detail.empty() ? message : message + ": " + detail.substr(0, detail.find(':'));
}

std::optional<YAML::Node> load_document(const SourceFile& file, Diagnostics& out) {
  auto root = parse_document(file.text());
  if (root) return std::move(*root);
  Reader(file, out).error(root.error().mark, root.error().full());
  return std::nullopt;
}

}  // namespace orc::recipe::detail
