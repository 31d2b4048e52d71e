// GitHub's GraphQL API for the fake GitHub (tests/fake_forge/github.py): every document is
// validated against GitHub's published schema (@octokit/graphql-schema) and executed by
// graphql-js over the data the fake sends with it, so the reply has exactly the shape GitHub
// gives that query. One JSON request per line on stdin, one JSON reply per line on stdout:
//
//   {"inspect": true, "query": ..., "variables": ..., "operationName": ...}
//     -> {"errors": [...]} or {"operation": "query" | "mutation",
//         "fields": [{"name": "rootField", "args": {...the arguments, variables filled in}}]}
//   {"query": ..., "variables": ..., "operationName": ..., "root": {...}}
//     -> {"data": ..., "errors": [...]}
//
// In `root`, a field that takes arguments is {"__by": "number", "values": {"5": {...}}} (the
// value for that argument), and a connection is {"__connection": [nodes], "__max": 2}: it is
// paged by `first` and `after` (at most __max a page), with pageInfo, edges and totalCount.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { buildClientSchema, execute, getOperationAST, parse, validate } from "graphql";
import { getArgumentValues, getVariableValues } from "graphql/execution/values.js";

const introspection = JSON.parse(
  readFileSync(
    new URL("./node_modules/@octokit/graphql-schema/schema.json", import.meta.url),
    "utf8",
  ),
);
const schema = buildClientSchema(introspection);

function fieldResolver(source, args, context, info) {
  const value = source?.[info.fieldName];
  if (value && typeof value === "object" && !Array.isArray(value)) {
    if ("__by" in value) return value.values[String(args[value.__by])] ?? null;
    if ("__connection" in value) return page(value.__connection, value.__max, args);
  }
  return typeof value === "function" ? value(args) : value;
}

function page(all, max, args) {
  const start = args.after != null ? Number(args.after) + 1 : 0;
  const size = Math.min(args.first ?? all.length, max ?? all.length);
  const nodes = all.slice(start, start + size);
  const cursor = (index) => String(start + index);
  return {
    nodes,
    edges: nodes.map((node, index) => ({ node, cursor: cursor(index) })),
    totalCount: all.length,
    pageInfo: {
      hasNextPage: start + nodes.length < all.length,
      hasPreviousPage: start > 0,
      startCursor: nodes.length ? cursor(0) : null,
      endCursor: nodes.length ? cursor(nodes.length - 1) : null,
    },
  };
}

function errors(list) {
  return { errors: list.map((error) => ({ message: error.message })) };
}

function answer(request) {
  let document;
  try {
    document = parse(request.query);
  } catch (error) {
    return errors([error]);
  }
  const problems = validate(schema, document);
  if (problems.length) return errors(problems);
  const operation = getOperationAST(document, request.operationName ?? undefined);
  if (!operation) return errors([{ message: "no single operation to run" }]);
  const coerced = getVariableValues(
    schema,
    operation.variableDefinitions ?? [],
    request.variables ?? {},
  );
  if (coerced.errors) return errors(coerced.errors);
  if (request.inspect) {
    const type = operation.operation === "mutation" ? schema.getMutationType() : schema.getQueryType();
    const fields = operation.selectionSet.selections
      .filter((selection) => selection.kind === "Field")
      .map((selection) => ({
        name: selection.name.value,
        args: getArgumentValues(type.getFields()[selection.name.value], selection, coerced.coerced),
      }));
    return { operation: operation.operation, fields };
  }
  const result = execute({
    schema,
    document,
    rootValue: request.root,
    variableValues: request.variables ?? {},
    operationName: request.operationName ?? undefined,
    fieldResolver,
  });
  return {
    data: result.data ?? null,
    ...(result.errors ? errors(result.errors) : {}),
  };
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = errors([error]);
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
