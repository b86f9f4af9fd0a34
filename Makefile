# Ductor's two commands: `make run` and `make test`. Both install what they
# need on a Debian machine with Go (PostgreSQL's server binaries, and
# Chromium for the browser tests) when it is missing.

SQLC  := go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1
TEMPL := go run github.com/a-h/templ/cmd/templ@v0.3.1100
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
GOTEST_FLAGS ?= -count=1 -timeout 25m

.PHONY: run test build generate check-generated vet unit fuzz vulncheck apiclients pg-deps browser-deps node-deps check-deploy bench bench-short release clean

## run: Ductor in one process, with its own Postgres under ./.ductor when DATABASE_URL is unset
run: pg-deps
	go run . dev

## test: vet, generated-code check, every test against a throwaway Postgres, a short fuzz
test: pg-deps browser-deps check-generated vet vulncheck apiclients check-deploy unit fuzz bench-short

## build: bin/ductor (VERSION=v1.2.3 stamps the version `ductor version`, /healthz,
## the User-Agent of http steps and ductor_build_info report)
VERSION ?=
build:
	go build -ldflags "$(if $(VERSION),-X github.com/ductor/ductor/app/version.version=$(VERSION))" -o bin/ductor .

## release: VERSION=vX.Y.Z checks the version is semver and CHANGELOG.md has its
## dated section (docs/versioning.md), then builds bin/ductor stamped with it
release:
	@echo "$(VERSION)" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || \
		{ echo "release: VERSION=$(VERSION) is not vMAJOR.MINOR.PATCH (make release VERSION=v1.2.3)"; exit 1; }
	@grep -Eq '^## \[$(patsubst v%,%,$(VERSION))\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$$' CHANGELOG.md || \
		{ echo "release: CHANGELOG.md has no section \"## [$(patsubst v%,%,$(VERSION))] - YYYY-MM-DD\""; exit 1; }
	$(MAKE) build VERSION=$(VERSION)
	@bin/ductor version | grep -q '^ductor $(VERSION) ' || { echo "release: bin/ductor does not report $(VERSION)"; exit 1; }
	@echo "release: bin/ductor is $(VERSION); tag it with: git tag -a $(VERSION) -m 'Ductor $(VERSION)'"

## unit: every package's tests, the SDK module's (sdk/) too; the e2e scrape of a running server is checked with promtool
unit: pg-deps node-deps bin/pgrun bin/promtool
	PROMTOOL=$(CURDIR)/bin/promtool DUCTOR_REQUIRE_PROMTOOL=1 bin/pgrun -- go test $(GOTEST_FLAGS) ./...
	cd sdk && go test $(GOTEST_FLAGS) ./...

## check-deploy: the Prometheus alert rules in deploy/ are valid and pass their unit tests
check-deploy: bin/promtool
	bin/promtool check rules deploy/prometheus/ductor-alerts.yml
	cd deploy/prometheus && ../../bin/promtool test rules ductor-alerts_test.yml

## bin/promtool: the promtool on PATH, or the one in Debian's prometheus package,
## unpacked from the package alone (installing it would start a Prometheus server)
bin/promtool:
	@mkdir -p bin
	@if command -v promtool >/dev/null 2>&1; then ln -sf "$$(command -v promtool)" bin/promtool; else \
		echo "fetching promtool from Debian's prometheus package"; \
		rm -rf bin/promtool-deb && mkdir -p bin/promtool-deb && cd bin/promtool-deb && \
		{ apt-get download prometheus >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && apt-get download prometheus; }; } && \
		dpkg-deb -x prometheus_*.deb root && cp root/usr/bin/promtool ../promtool && cd .. && rm -rf promtool-deb; fi

## vulncheck: govulncheck against an offline database built from the golang.org/x/vulndb
## module. It reports one line a finding (the whole report goes to bin/vulncheck.txt)
## and does not fail: today's findings need a newer Go toolchain (standard library) or
## have no fixed release yet (echo); see the README.
VULNDB := golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018

vulncheck: bin/vulndb/index/db.json
	@go run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db file://$(CURDIR)/bin/vulndb ./... > bin/vulncheck.txt 2>&1; \
	awk '/^Vulnerability #/ {id = $$3} /Found in:/ {found = $$3} /Fixed in:/ {print "  " id ": " found ", fixed in " $$3} \
		/^(Your code|No vulnerabilities|This scan)/ {print}' bin/vulncheck.txt; \
	echo "govulncheck: full report in bin/vulncheck.txt"

## apiclients: generate a Go client (oapi-codegen) and a TypeScript client
## (openapi-typescript) from the OpenAPI document the server serves, and compile both,
## in bin/apiclients (out of the repository's tree).
OAPI_CODEGEN := go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
APICLIENTS := $(CURDIR)/bin/apiclients

apiclients: node-deps
	@rm -rf $(APICLIENTS) && mkdir -p $(APICLIENTS)/go $(APICLIENTS)/ts
	OPENAPI_OUT=$(APICLIENTS)/openapi.json go test ./app/server/api -run '^TestServedOpenAPIDocument$$' -count=1
	cp .ci/apiclients/go.mod.txt $(APICLIENTS)/go/go.mod && cp .ci/apiclients/use.go.txt $(APICLIENTS)/go/use.go
	cd $(APICLIENTS)/go && $(OAPI_CODEGEN) -config $(CURDIR)/.ci/apiclients/oapi-codegen.yaml ../openapi.json && \
		GOFLAGS=-mod=mod go mod tidy && go build ./...
	cp .ci/apiclients/client.ts $(APICLIENTS)/ts/
	cd $(APICLIENTS)/ts && npx --yes openapi-typescript@7.13.0 ../openapi.json --default-non-nullable=false -o api.d.ts && \
		npx --yes -p typescript@5.9.3 tsc --strict --noEmit --skipLibCheck false api.d.ts client.ts
	@echo "apiclients: the Go and TypeScript clients compile"

bin/vulndb/index/db.json:
	go mod download $(VULNDB)
	cd "$$(go mod download -json $(VULNDB) | sed -n 's/.*"Dir": "\(.*\)",/\1/p')" && \
		go run ./cmd/indexdb -vulns data/osv -out $(CURDIR)/bin/vulndb

## fuzz: a short run of the definition compiler's fuzz target over its committed corpus
## (minimizing each new input for at most 1s: the 60s default spends a short run minimizing)
fuzz:
	go test -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime 15s -fuzzminimizetime 1s ./app/definition

bin/pgrun: $(wildcard app/pgcluster/*.go app/pgcluster/pgrun/*.go)
	go build -o bin/pgrun ./app/pgcluster/pgrun

STATICCHECK := go run honnef.co/go/tools/cmd/staticcheck@v0.8.2

vet:
	go vet ./...
	$(STATICCHECK) ./...
	cd sdk && go vet ./... && $(STATICCHECK) ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

## generate: regenerate sqlc queries, templ components, the definition schema and the
## reference's field tables
generate:
	$(SQLC) generate
	$(TEMPL) generate -path views
	go test ./app/definition -run '^TestCommittedSchemaIsCurrent$$' -count=1 -update >/dev/null
	go test ./docs -run '^TestFieldTablesAreCurrent$$' -count=1 -update >/dev/null

## check-generated: fail if committed generated code is not current
check-generated: generate
	@git diff --exit-code -- queries views docs || { echo "generated code is stale: run make generate and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- queries views docs)" || { echo "generated files not committed:"; git status --porcelain -- queries views docs; exit 1; }

## bench-short: the benchmark suite at small sizes, so it never rots (CI)
bench-short: pg-deps
	go test -run '^$$' -bench . -benchtime 1x -short ./bench

## bench: the benchmark suite against its own Postgres
bench: pg-deps bin/pgrun
	go test -run '^$$' -bench . -benchtime 1x -timeout 60m ./bench

## pg-deps: PostgreSQL's server programs, and libfaketime for the clock-skew tests
pg-deps:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		{ echo "installing PostgreSQL"; $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; }
	@ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || \
		{ echo "installing faketime"; $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends faketime; }

browser-deps:
	@command -v chromium >/dev/null 2>&1 || \
		{ echo "installing Chromium"; $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }

node-deps:
	@command -v npx >/dev/null 2>&1 || \
		{ echo "installing Node.js"; $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; }

clean:
	rm -rf bin
