import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { type A2aError, ERROR_INFO_TYPE } from "../../../bridge/a2a/index.js";

/** The trailer gRPC carries a `google.rpc.Status` in (the "richer error model"). */
export const STATUS_DETAILS_TRAILER = "grpc-status-details-bin";

/**
 * The gRPC status code of each `google.rpc.Code` name an A2A error maps to (errors.ts in the
 * bridge holds the name of each, as the specification's §5.4 table says).
 */
const CODES: Record<string, status> = {
  OK: status.OK,
  CANCELLED: status.CANCELLED,
  UNKNOWN: status.UNKNOWN,
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  DEADLINE_EXCEEDED: status.DEADLINE_EXCEEDED,
  NOT_FOUND: status.NOT_FOUND,
  ALREADY_EXISTS: status.ALREADY_EXISTS,
  PERMISSION_DENIED: status.PERMISSION_DENIED,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  ABORTED: status.ABORTED,
  OUT_OF_RANGE: status.OUT_OF_RANGE,
  UNIMPLEMENTED: status.UNIMPLEMENTED,
  INTERNAL: status.INTERNAL,
  UNAVAILABLE: status.UNAVAILABLE,
  DATA_LOSS: status.DATA_LOSS,
  UNAUTHENTICATED: status.UNAUTHENTICATED,
};

/** The gRPC status code of an A2A error. */
export const grpcCodeOf = (error: A2aError): status =>
  CODES[error.mapping.status] ?? status.UNKNOWN;

/**
 * `google.rpc.ErrorInfo { reason = 1; domain = 2; map<string, string> metadata = 3 }`, the
 * detail A2A asks for (specification §10.6).
 */
function encodeErrorInfo(info: {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).string(info.reason);
  writer.tag(2, WireType.LengthDelimited).string(info.domain);
  for (const [key, value] of Object.entries(info.metadata)) {
    // A map entry is a message of its own: key = 1, value = 2.
    writer.tag(3, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string(key);
    writer.tag(2, WireType.LengthDelimited).string(value);
    writer.join();
  }
  return writer.finish();
}

/**
 * `google.rpc.Status { int32 code = 1; string message = 2; repeated google.protobuf.Any
 * details = 3 }`, its one detail the ErrorInfo (`Any { type_url = 1; bytes value = 2 }`).
 */
export function encodeStatusDetails(error: A2aError): Buffer {
  const info = error.errorInfo() as {
    reason: string;
    domain: string;
    metadata?: Record<string, string>;
  };
  const writer = new BinaryWriter();
  writer.tag(1, WireType.Varint).int32(grpcCodeOf(error));
  writer.tag(2, WireType.LengthDelimited).string(error.message);
  writer.tag(3, WireType.LengthDelimited).fork();
  writer.tag(1, WireType.LengthDelimited).string(ERROR_INFO_TYPE);
  writer
    .tag(2, WireType.LengthDelimited)
    .bytes(encodeErrorInfo({ ...info, metadata: info.metadata ?? {} }));
  writer.join();
  return Buffer.from(writer.finish());
}

/**
 * An A2A error as gRPC answers it: the status code of the specification's table, the message,
 * and the `google.rpc.Status` with its ErrorInfo in the `grpc-status-details-bin` trailer.
 */
export function toServiceError(error: A2aError): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_TRAILER, encodeStatusDetails(error));
  return { code: grpcCodeOf(error), details: error.message, metadata };
}
