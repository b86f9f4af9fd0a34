-- event_trigger lists the event triggers of each definition's newest
-- published version, so a new event finds the definitions it starts by
-- (tenant, name) without reading any manifest. Publishing and
-- unpublishing rewrite a definition's rows. A filter that fails to
-- evaluate is no match; the last such failure is kept here.
CREATE TABLE event_trigger (
    tenant_id       uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    name            text        NOT NULL,
    definition_key  text        NOT NULL,
    -- position is the trigger's index in the document's triggers.
    position        integer     NOT NULL,
    filter_expr     text        NOT NULL DEFAULT '',
    input_expr      text        NOT NULL DEFAULT '',
    started         bigint      NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    last_error_at   timestamptz,
    PRIMARY KEY (tenant_id, name, definition_key, position)
);

CREATE INDEX event_trigger_definition_idx ON event_trigger (tenant_id, definition_key);
