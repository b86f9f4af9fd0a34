-- A tick loads a run's step nodes, never its scatter children: without
-- this index that read walks every child of a 10,000-way fan-out.
CREATE INDEX run_node_steps_idx ON run_node (tenant_id, run_id) WHERE scatter IS NULL;
