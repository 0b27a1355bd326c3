import CZlib
import Foundation

/// gzip (RFC 1952) compression for large publish bodies, on the system zlib.
public enum Gzip {
    /// Compresses `data` into a gzip stream.
    public static func compress(_ data: Data, level: Int32 = Z_DEFAULT_COMPRESSION) throws(WireError) -> Data {
        var stream = z_stream()
        // windowBits 15 + 16 asks zlib for a gzip header and trailer.
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw .invalidArgument("gzip: deflateInit failed") }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        let status = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw .invalidArgument("gzip: deflate failed (\(status))") }
        return Data(output.prefix(Int(stream.total_out)))
    }

    /// Decompresses a gzip stream; throws on corrupt input or when the result passes `limit` bytes.
    public static func decompress(_ data: Data, limit: Int = 8 << 20) throws(WireError) -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .invalidArgument("gzip: inflateInit failed")
        }
        defer { inflateEnd(&stream) }
        var input = [UInt8](data)
        var result = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    result.append(outBuffer.baseAddress!, count: outBuffer.count - Int(stream.avail_out))
                }
            } while status == Z_OK && result.count <= limit
        }
        guard status == Z_STREAM_END else {
            throw .invalidArgument(result.count > limit ? "gzip: body larger than \(limit) bytes" : "gzip: corrupt stream (\(status))")
        }
        return result
    }
}
