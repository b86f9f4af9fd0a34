// Package docs is Ductor's user documentation: the Markdown files beside
// this one (start with README.md) and the JSON Schema of definition
// documents in schema/. Its test compiles every definition example,
// validates it against the schema, and runs the runnable ones against a
// real server on a real Postgres, so the documentation cannot rot.
package docs
